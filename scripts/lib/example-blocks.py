"""Prints a shell block of an example file, as the example's runner would run it.

    python3 example-blocks.py FILE ANCHOR

The block is the first YAML literal block (a line ending in `|`, such as `- |` or `run: |`)
after the first line containing ANCHOR, dedented. The acceptance script runs these blocks
themselves, so the examples are tested as shipped, not copies of them.
"""
import sys

path, anchor = sys.argv[1:]
lines = open(path).read().split("\n")
start = next(i for i, line in enumerate(lines) if anchor in line)
head = next(i for i in range(start, len(lines)) if lines[i].rstrip().endswith("|"))
indent = len(lines[head]) - len(lines[head].lstrip())
block = []
for line in lines[head + 1:]:
    if line.strip() and len(line) - len(line.lstrip()) <= indent:
        break
    block.append(line)
while block and not block[-1].strip():
    block.pop()
margin = min(len(line) - len(line.lstrip()) for line in block if line.strip())
print("\n".join(line[margin:] for line in block))
