#!/usr/bin/env python3
"""Regenerates the flytepropeller conformance corpus from an upstream checkout.

usage: convert.py TESTDATA_DIR COMMIT [OUT_DIR]

TESTDATA_DIR is flytepropeller/pkg/compiler/test/testdata of a flyteorg/flyte checkout, COMMIT
the commit it was taken from (written into expected.tsv). OUT_DIR defaults to this script's
directory. Only the standard library is used (no protobuf): the snacks-core .pb files already
are pyflyte's entity files (NN_name_1.pb task, _2.pb workflow, _3.pb launch plan) and go into
one package archive byte for byte; the branch/ and dynamic/ closures are JSON (protobuf's JSON
mapping of core.WorkflowClosure / core.DynamicJobSpec) and are copied, the test decodes them.
The archive is deterministic (sorted names, mtime 0, uid/gid 0) so a rerun on the same commit
changes nothing.
"""
import gzip
import io
import os
import shutil
import sys
import tarfile


def pack(src_dir, names, out_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(names):
            with open(os.path.join(src_dir, name), "rb") as f:
                data = f.read()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    with open(out_path, "wb") as out:
        with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as gz:
            gz.write(buf.getvalue())


def main(argv):
    if len(argv) not in (3, 4):
        sys.stderr.write(__doc__)
        return 2
    src, commit = argv[1], argv[2]
    out = argv[3] if len(argv) == 4 else os.path.dirname(os.path.abspath(__file__))
    rows = []  # (corpus file, kind, upstream path, expected outcome)

    snacks = os.path.join(src, "snacks-core")
    names = [n for n in os.listdir(snacks) if n.endswith(".pb")]
    if not names:
        sys.stderr.write("no snacks-core/*.pb under %s\n" % src)
        return 1
    pack(snacks, names, os.path.join(out, "snacks-core.tgz"))
    # TestUseCases: every task compiles (CompileTask), every workflow compiles (CompileWorkflow).
    rows.append(("snacks-core.tgz", "package", "snacks-core/*.pb", "compiles"))

    for sub, kind in (("branch", "workflow_closure"), ("dynamic", "dynamic_job_spec")):
        src_sub = os.path.join(src, sub)
        dst_sub = os.path.join(out, sub)
        shutil.rmtree(dst_sub, ignore_errors=True)
        os.makedirs(dst_sub)
        for name in sorted(os.listdir(src_sub)):
            path = os.path.join(src_sub, name)
            if not name.endswith(".json") or not os.path.isfile(path):
                continue  # compiled/ and k8s/ hold upstream's goldens of later stages
            shutil.copyfile(path, os.path.join(dst_sub, name))
            # branch/compiled/ holds a compiled closure for each: upstream compiled them all;
            # TestDynamic compiles dynamic/ with no error.
            rows.append((sub + "/" + name, kind, sub + "/" + name, "compiles"))

    with open(os.path.join(out, "expected.tsv"), "w") as f:
        f.write("# flyteorg/flyte %s flytepropeller/pkg/compiler/test/testdata\n" % commit)
        f.write("# corpus file\tkind\tupstream path\texpected\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    print("wrote %d corpus entries to %s" % (len(rows), out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
