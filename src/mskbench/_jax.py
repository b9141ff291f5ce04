"""JAX is an optional dependency: import it with an error that says how to get it."""

from __future__ import annotations


def require_jax(purpose: str):
    """``(jax, jax.numpy)``, or a ``RuntimeError`` naming ``purpose`` and the install command."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as exc:
        raise RuntimeError(f"{purpose} needs JAX ({exc}); pip install 'mskbench[gpu]' (CPU JAX works too)") from None
    return jax, jnp
