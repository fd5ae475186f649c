"""The command line the float64 reference generators share (gen_families.py, gen_bert.py)."""
import argparse
import sys


def parse(features, fuzz_help, llamacpp_help, fuzz_takes_dir):
    """Returns (args, OFF): --off FEATURE,... (checked against `features`: the negative controls),
    --fuzz-seeds (a folder, or a switch) and --llamacpp DIR."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--off", default="", help="comma-separated FEATURES removed from the references")
    if fuzz_takes_dir:
        ap.add_argument("--fuzz-seeds", metavar="DIR", help=fuzz_help)
    else:
        ap.add_argument("--fuzz-seeds", action="store_true", help=fuzz_help)
    ap.add_argument("--llamacpp", metavar="DIR", default="", help=llamacpp_help)
    args = ap.parse_args()
    off = set(x for x in args.off.split(",") if x)
    unknown = off - set(features)
    if unknown:
        sys.exit(f"unknown features {sorted(unknown)}; known: {features}")
    return args, off
