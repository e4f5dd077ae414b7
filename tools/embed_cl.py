#!/usr/bin/env python3
"""Embeds one OpenCL source file into a C file as a byte array.

usage: embed_cl.py INPUT.cl OUTPUT.c NAME
defines  const unsigned char ct_cl_NAME[]  (NUL-terminated)
and      const size_t ct_cl_NAME_size      (bytes, without the NUL)
"""
import sys


def main() -> int:
    src, out, name = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(src, "rb") as f:
        data = f.read()
    if b"\0" in data:
        sys.stderr.write(f"{src}: contains a NUL byte\n")
        return 1
    lines = [f"/* generated from {name}.cl by tools/embed_cl.py; do not edit */",
             "#include <stddef.h>",
             f"extern const unsigned char ct_cl_{name}[];",
             f"extern const size_t ct_cl_{name}_size;",
             f"const unsigned char ct_cl_{name}[] = {{"]
    for i in range(0, len(data), 16):
        lines.append("    " + ", ".join(str(b) for b in data[i:i + 16]) + ",")
    lines.append("    0")
    lines.append("};")
    lines.append(f"const size_t ct_cl_{name}_size = {len(data)};")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
