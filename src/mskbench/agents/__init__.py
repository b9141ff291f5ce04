"""Control paradigms and trainers. Each needs its extra (JAX for ``ppo``)."""
