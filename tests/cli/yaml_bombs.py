#!/usr/bin/env python3
"""Writes the two 3.8 MB YAML files of issue 27 item 5, each alone in its own directory:

  yaml_bombs.py DIR   ->  DIR/wide/overrides.yaml, DIR/many/projects.yaml, DIR/split/*.yaml

wide: 1,000 Overrides documents of 1,896 YAML nodes each (a 1,883-tag executionQueueAttributes
      list), within every per-document and documents-per-file bound;
many: 26,000 small Project documents of 53 nodes each (over the 1,000 documents-per-file bound).
split: 520 files, each one `wide` document (985,920 nodes in all: within the revision's node
      budget of 1,000,000, so every document is accepted and held at once).
Document k (from 0) of `many` starts on line 5k + 1.
"""
import os
import sys

work = sys.argv[1]
os.makedirs(f"{work}/wide", exist_ok=True)
os.makedirs(f"{work}/many", exist_ok=True)
os.makedirs(f"{work}/split", exist_ok=True)
with open(f"{work}/wide/overrides.yaml", "w") as f:
    tags = ",".join(["a"] * 1883)  # + the 13 nodes of the document around it = 1,896
    for i in range(1000):
        f.write("---\n" if i else "")
        f.write(f"apiVersion: flytecd/v1\nkind: Overrides\nproject: p{i:04d}\nspec:\n"
                f"  executionQueueAttributes:\n    tags: [{tags}]\n")
with open(f"{work}/many/projects.yaml", "w") as f:
    tags = ",".join(["a"] * 44)
    for i in range(26000):
        f.write("---\n" if i else "")
        f.write(f"apiVersion: flytecd/v1\nkind: Project\nid: p{i:05d}\nx: [{tags}]\n")
tags = ",".join(["a"] * 1883)
for i in range(520):
    with open(f"{work}/split/p{i:04d}.yaml", "w") as f:
        f.write(f"apiVersion: flytecd/v1\nkind: Overrides\nproject: p{i:04d}\nspec:\n"
                f"  executionQueueAttributes:\n    tags: [{tags}]\n")
