#!/usr/bin/env python3
"""Mutated copies of real Python files, to measure pysig_parity.py on broken sources.

Each output file is a random .py file under SRC with one or two single-character edits (delete,
insert or replace with a character that often breaks syntax). Deterministic for a given SEED.

usage: pysig_mutate.py SRC OUT SEED COUNT
"""
import random, sys, os, pathlib
R = random.Random(int(sys.argv[3]))
files = sorted(p for p in pathlib.Path(sys.argv[1]).rglob('*.py') if 'references' not in p.parts)
out = pathlib.Path(sys.argv[2]); out.mkdir(parents=True, exist_ok=True)
for i in range(int(sys.argv[4])):
    p = R.choice(files)
    try: t = p.read_text(encoding='utf-8')
    except Exception: continue
    if not t: continue
    for _ in range(R.randrange(1, 3)):
        k = R.randrange(len(t))
        t = t[:k] + R.choice(['', '(', ')', ':', '"', "'", '\\', ' ', '\n', '\t', '#', ',', 'x ', '=', '@', '[', '*', '.', '1']) + t[k + R.randrange(2):]
    (out / f'm{i}.py').write_text(t)
