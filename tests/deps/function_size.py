#!/usr/bin/env python3
"""No function of daemon/, sources/ or sinks/ is longer than 120 lines (issue 23).

  function_size.py SOURCE_DIR [MAX_LINES]

clang-tidy's readability-function-size (LineThreshold 120, in .clang-tidy) says the same but needs
a compile database and minutes; this reads the tree as clang-format lays it out: a definition
starts at indentation 0 or 2 (namespace scope, or a method inside a class) and its body ends at
the first closing brace at that indentation. Generated code (daemon/idl) is left out. Prints each
function over the bound with file:line and its length; exit 1 when there is one.
"""
import os
import re
import subprocess
import sys

src = sys.argv[1]
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 120
files = subprocess.check_output(
    ["git", "-C", src, "ls-files", "daemon/*.cpp", "daemon/*.hpp", "sources/*.cpp",
     "sources/*.hpp", "sinks/*.cpp", "sinks/*.hpp"]).decode().split()
not_a_function = re.compile(
    r"^\s*(namespace|struct|class|enum|extern|union|if|for|while|switch|return|else|do|case|"
    r"template)\b")
over = []
for rel in files:
    if rel.startswith("daemon/idl/"):
        continue
    with open(os.path.join(src, rel), errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^( *)([A-Za-z~].*)$", lines[i])
        if m and len(m.group(1)) <= 2 and "(" in lines[i] and not not_a_function.match(lines[i]):
            indent = m.group(1)
            j = i  # the signature may span lines: find its opening brace
            # A definition on one line (`int f() { return 1; }`) ends the search at once; a later
            # line ending in `}` (a `= {}` default argument) does not.
            one_line = lines[i].rstrip().endswith("}") and "{" in lines[i]
            while (not one_line and j < len(lines) and j - i < 8
                   and not lines[j].rstrip().endswith(("{", ";"))):
                j += 1
            if (j < len(lines) and lines[j].rstrip().endswith("{")
                    and "=" not in lines[i].split("(")[0]):
                k = j + 1
                while k < len(lines) and not lines[k].startswith(indent + "}"):
                    k += 1
                if k - j - 1 > limit:
                    over.append((rel, i + 1, k - j - 1, lines[i].strip()[:90]))
                i = k
        i += 1
for rel, line, n, sig in over:
    print(f"{rel}:{line}: {n} lines (at most {limit}): {sig}")
if over:
    print(f"FAIL {len(over)} function(s) over {limit} lines: split them by idea")
    sys.exit(1)
print(f"ok no function over {limit} lines in {len(files)} files")
