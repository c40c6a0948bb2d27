#!/usr/bin/env python3
"""Writes a `pyflyte package` archive (.tgz, entity files at the root as pyflyte lays them out)
whose one workflow, 000_bomb.wf_2.pb, is a WorkflowSpec with NODES nodes, written as protobuf
wire bytes directly (no protobuf library needed).

  decode_bomb.py OUT.tgz NODES [empty|unnamed]

empty   (default) every node is an empty message: 2 bytes on the wire, 100+ bytes decoded (issue 27
        item 6: 4,000,000 nodes are an 8 KB .tgz that decoded to 573 MB).
unnamed every node carries a 40-character metadata.name and no id: within the decode bounds,
        and the compiler's "a node has no id" once per node.
"""
import io
import sys
import tarfile


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number, payload):  # a length-delimited field
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def field_varint(number, value):
    return varint(number << 3) + varint(value)


def main():
    out, nodes = sys.argv[1], int(sys.argv[2])
    mode = sys.argv[3] if len(sys.argv) > 3 else "empty"
    # flyteidl.core.Identifier: resource_type=1 (WORKFLOW=2), project=2, domain=3, name=4, version=5
    ident = (field_varint(1, 2) + field(2, b"{{ registration.project }}") +
             field(3, b"{{ registration.domain }}") + field(4, b"bomb.wf") +
             field(5, b"{{ registration.version }}"))
    if mode == "empty":
        node = field(4, b"")  # WorkflowTemplate.nodes = 4, an empty Node
    else:
        node = field(4, field(2, field(1, b"n" * 40)))  # Node.metadata = 2, NodeMetadata.name = 1
    template = field(1, ident) + node * nodes  # WorkflowTemplate.id = 1
    spec = field(1, template)  # WorkflowSpec.template = 1
    info = tarfile.TarInfo("000_bomb.wf_2.pb")
    info.size = len(spec)
    info.mode = 0o644
    with tarfile.open(out, "w:gz") as tar:
        tar.addfile(info, io.BytesIO(spec))


if __name__ == "__main__":
    main()
