#!/usr/bin/env python3
"""A Python consumer of Knob Studio bundles: runs a tuned calibrator's step graph without Knob Studio.

    python3 run_step_graph.py NAME.knob.zip FRAMES.npy [TIMESTAMPS.npy]
    python3 run_step_graph.py NAME.knob.zip --check

FRAMES.npy holds uint8 frames [T, H, W, C] at the model's input size (8-bit pixels, as a camera
gives them); TIMESTAMPS.npy their times in seconds (float64 [T]; default i / the bundle's frame
rate). The bundle is checked first: the format's major version and every member's SHA-256
against the manifest (`--check` stops there). Then each frame goes through deploy/step.onnx with
onnxruntime, the gate state carried from frame to frame as the app carries it (continuous mode),
and one JSON line per frame is printed: {"frame", "t", "top1", "gate", "uStar", "probabilities"}.

Dependencies: numpy and onnxruntime (pip install numpy onnxruntime). The same loop is in each
bundle's deploy/README.md.
"""
import hashlib
import json
import sys
import zipfile

SUPPORTED_MAJOR = 1


def fail(message):
    sys.stderr.write(f"run_step_graph: {message}\n")
    sys.exit(1)


def checked_bundle(path):
    """The manifest and members of a bundle, after checking its version and every member's SHA-256."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as error:
        fail(f"{path}: not a readable zip ({error})")
    with archive:
        names = archive.namelist()
        if len(set(names)) != len(names):
            fail(f"{path}: duplicate member names")
        members = {name: archive.read(name) for name in names if not name.endswith("/")}
    if "manifest.json" not in members:
        fail(f"{path}: no manifest.json")
    manifest = json.loads(members["manifest.json"].decode("utf-8"))
    if manifest.get("format") != "knob-bundle":
        fail(f"{path}: not a Knob Studio bundle")
    major = int(str(manifest.get("formatVersion", "")).split(".")[0] or -1)
    if major > SUPPORTED_MAJOR or major < 0:
        fail(f"{path}: bundle format {manifest.get('formatVersion')} is newer than this consumer reads")
    for name, entry in manifest["members"].items():
        member = members.get(name)
        if member is None or len(member) != entry["bytes"]:
            fail(f"{path}: member {name} is missing or has the wrong size")
        if hashlib.sha256(member).hexdigest() != entry["sha256"]:
            fail(f"{path}: member {name} does not match its SHA-256")
    if manifest["deploy"]["stepGraph"] is None:
        fail(f"{path}: no step graph ({manifest['deploy']['stepGraphNote']})")
    return manifest, members


def run(manifest, step_graph, frames, timestamps):
    import numpy as np
    import onnxruntime as ort

    session = ort.InferenceSession(step_graph, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    gate = manifest["gate"]
    continuous = gate["mode"] == "continuous"
    nominal_dt = 1.0 / manifest["timing"]["frameRateHz"]
    # a stream starts at rest; a condition-aware calibrator's hysteresis adds condition and
    # condition_run where the graph has them (deploy/README.md)
    start = {"g": gate["g0"], "v": 0.0, "u_prev": gate["g0"], "condition": -1.0, "condition_run": 0.0}
    inputs = {i.name for i in session.get_inputs()}
    state = {name: np.full((1, 1), value) for name, value in start.items() if name in inputs}
    for i, frame in enumerate(frames):
        feeds = {"frames": np.ascontiguousarray(frame[np.newaxis], dtype=np.uint8)}
        if continuous:
            dt = nominal_dt if i == 0 else float(timestamps[i] - timestamps[i - 1])
            feeds.update(state)
            feeds["dt"] = np.full((1, 1), dt)
        out = dict(zip(names, session.run(names, feeds)))
        if continuous:
            state = {name: out[name + "_next"] for name in state}
        probabilities = out["probabilities"][0]
        print(
            json.dumps(
                {
                    "frame": i,
                    "t": float(timestamps[i]),
                    "top1": int(probabilities.argmax()),
                    "gate": float(out["gate"][0, 0]),
                    "uStar": float(out["u_star"][0, 0]),
                    "probabilities": [float(p) for p in probabilities],
                }
            )
        )


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        fail("usage: run_step_graph.py NAME.knob.zip FRAMES.npy [TIMESTAMPS.npy] | NAME.knob.zip --check")
    manifest, members = checked_bundle(argv[0])
    if argv[1] == "--check":
        print(f"{argv[0]}: sound ({len(manifest['members'])} members, step graph {manifest['deploy']['stepGraph']})")
        return
    import numpy as np

    frames = np.load(argv[1], allow_pickle=False)
    spec = manifest["model"]["input"]
    expected = (spec["height"], spec["width"], spec["channels"])
    if frames.dtype != np.uint8 or frames.ndim != 4 or frames.shape[1:] != expected:
        fail(f"{argv[1]}: frames must be uint8 [T, {expected[0]}, {expected[1]}, {expected[2]}], got {frames.dtype} {list(frames.shape)}")
    if len(argv) > 2:
        timestamps = np.load(argv[2], allow_pickle=False).astype(np.float64)
        if timestamps.shape != (frames.shape[0],):
            fail(f"{argv[2]}: {timestamps.shape} timestamps for {frames.shape[0]} frames")
    else:
        timestamps = np.arange(frames.shape[0]) / manifest["timing"]["frameRateHz"]
    run(manifest, members[manifest["deploy"]["stepGraph"]], frames, timestamps)


if __name__ == "__main__":
    main(sys.argv[1:])
