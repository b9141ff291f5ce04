"""Copy the expert's Stand train-environment episodes of seeds 0-19 from /work/runs/expert.db (read-only) into
res.db, as stored there (no privileged flag: that store predates it, so the expert is privileged by name)."""
import sqlite3
from mskbench.eval.store import COLUMNS, ResultsStore, JSON_COLUMNS
import json
src = sqlite3.connect("file:/work/runs/expert.db?mode=ro", uri=True)
rows = src.execute(f"SELECT {', '.join(COLUMNS)} FROM episodes WHERE method='expert' AND task='Stand' "
                   "AND perturbation='none' AND seed < 20").fetchall()
with ResultsStore("res.db") as s:
    n = sum(s.write({c: v for c, v in zip(COLUMNS, r)}) for r in rows)
print("copied", n)
