# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""scripts/testgen.py's reading of p4testgen's PTF output, without p4testgen.

The sample (tests/data/p4testgen_sample_ptf.py.txt) is rendered by hand from
the inja template in p4c's backends/p4tools/modules/testgen/targets/tofino/
test_backend/ptf.cpp at 34b86e9: its preamble verbatim, and one test per
shape the template emits (lpm, exact and ternary keys, a plain and a struct
register, a default-action override, a masked expected packet, a drop, an
empty control plane).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import pytest

from hw_profiles import safe_yaml
from models.vectors.format import parse_vector_file
from models.vectors.runner import VectorMismatch, compare_outputs

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "tests" / "data" / "p4testgen_sample_ptf.py.txt"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("testgen_script", REPO / "scripts" / "testgen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["testgen_script"] = module
    spec.loader.exec_module(module)
    return module


tg = _load_script()


@pytest.fixture(scope="module")
def tests_by_number() -> dict[int, object]:
    return {t.number: t for t in tg.parse_ptf(SAMPLE.read_text(), "sample")}


def test_every_test_class_is_read(tests_by_number: dict[int, object]) -> None:
    assert sorted(tests_by_number) == [1, 2, 3]


def test_exact_lpm_and_ternary_keys(tests_by_number: dict[int, object]) -> None:
    tables = tests_by_number[1].tables  # type: ignore[attr-defined]
    lpm, exact, ternary = tables
    assert lpm == {
        "table": "SwitchIngress.forward.ipv4_lpm",
        "key": {"hdr.ipv4.dst_addr": {"value": "0xA000200", "prefix_len": 24}},
        "action": "SwitchIngress.forward.route",
        "data": {"port": "0x2", "src_mac": "0x20000000002", "dst_mac": "0x202"},
    }
    # An action without parameters has no data.
    assert exact == {
        "table": "SwitchIngress.trust.trusted_ports",
        "key": {"ig_intr_md.ingress_port": "0x1"},
        "action": "SwitchIngress.trust.trusted",
    }
    assert ternary["key"] == {
        "hdr.ipv4.src_addr": {"value": "0xA000101", "mask": "0xFFFFFFFF"},
        "hdr.ipv4.dscp": {"value": "0x0", "mask": "0x3F"},
    }


def test_register_values_plain_and_struct(tests_by_number: dict[int, object]) -> None:
    assert tests_by_number[1].registers == [  # type: ignore[attr-defined]
        {"register": "SwitchIngress.vq_used", "index": 3, "value": "0xFF"}
    ]
    # Members packed first member high, each as wide as printed (16 bits):
    # what models/switch/core.Register.pack does with members=("id", "packets").
    assert tests_by_number[2].registers == [  # type: ignore[attr-defined]
        {"register": "SwitchEgress.occupancy_window", "index": 5, "value": "0x30007"}
    ]


def test_default_override_becomes_a_default_entry(tests_by_number: dict[int, object]) -> None:
    assert tests_by_number[2].tables == [  # type: ignore[attr-defined]
        {
            "table": "SwitchIngress.forward.ipv4_lpm",
            "action": "SwitchIngress.forward.drop",
            "default": True,
        }
    ]


def test_masked_expected_packet(tests_by_number: dict[int, object]) -> None:
    t = tests_by_number[1]
    assert t.send_port == 1 and t.expect_port == 2  # type: ignore[attr-defined]
    mask = t.expect_mask  # type: ignore[attr-defined]
    assert len(mask) == len(t.expect_packet) == 54  # type: ignore[attr-defined]
    # set_do_not_care(126, 2): the ECN bits (low 2 of byte 15);
    # set_do_not_care(192, 16): the IPv4 checksum (bytes 24-25). Bit offsets
    # count from the first bit sent, as ptf.mask.Mask does.
    assert mask[15] == 0xFC
    assert mask[24:26] == b"\x00\x00"
    assert all(b == 0xFF for n, b in enumerate(mask) if n not in (15, 24, 25))


def test_unmasked_and_dropped(tests_by_number: dict[int, object]) -> None:
    t3 = tests_by_number[3]
    assert t3.expect_mask is None and t3.tables == [] and t3.registers == []  # type: ignore[attr-defined]
    t2 = tests_by_number[2]
    assert t2.expect_packet is None and t2.expect_port is None  # type: ignore[attr-defined]
    assert tg.to_vector(t2)["steps"][0]["expect"] == []


def test_rendered_file_loads_with_header_and_masks() -> None:
    tests = tg.parse_ptf(SAMPLE.read_text(), "sample")
    text = tg.render_vectors("pmqecn", "tofino", tests, "34b86e9", 7, 50)
    assert "# p4c commit: 34b86e9" in text
    assert "# seed: 7" in text
    # The last test's cumulative figure is the run's coverage.
    assert "statement coverage p4testgen reports: 0.46" in text
    vfile = parse_vector_file(safe_yaml.loads(text, "t", hex_ints=True), "t")
    assert vfile.chip == "tofino" and vfile.ports == "device"
    first = vfile.vectors[0]
    assert first.setup.tables[2].key["hdr.ipv4.dscp"].mask == 0x3F
    assert first.setup.registers[0].value == 0xFF
    assert first.steps[0].expect[0].mask is not None
    assert vfile.vectors[1].steps[0].expect == []


def test_mask_decides_what_is_compared() -> None:
    frame = bytes(range(60))
    want = frame[:-1] + b"\x00"
    differs_in_low_bits = [(2, frame[:-1] + b"\x03")]
    ignore_low_bits = b"\xff" * 59 + b"\xfc"
    compare_outputs(differs_in_low_bits, [(2, want)], "ctx", [ignore_low_bits])
    with pytest.raises(VectorMismatch):
        compare_outputs(differs_in_low_bits, [(2, want)], "ctx", [b"\xff" * 60])
    with pytest.raises(VectorMismatch):  # right bytes, wrong port
        compare_outputs([(3, want)], [(2, want)], "ctx", [ignore_low_bits])
    with pytest.raises(VectorMismatch):  # an extra packet
        compare_outputs([(2, want), (2, want)], [(2, want)], "ctx", [ignore_low_bits])


def test_unknown_construct_is_named_not_dropped() -> None:
    text = SAMPLE.read_text().replace(
        "self.setRegisterValue('SwitchIngress.vq_used', 0x00FF, 3)",
        "self.setDirectRegisterValue('SwitchIngress.t', 0x1)",
    )
    with pytest.raises(tg.TranslateError, match="direct register"):
        tg.parse_ptf(text, "sample")


def test_nothing_is_executed() -> None:
    # A call outside the template's vocabulary is refused, never run.
    head, sep, tail = SAMPLE.read_text().rpartition("def setupCtrlPlane(self):\n        pass")
    assert sep  # Test3's empty control plane
    text = head + "def setupCtrlPlane(self):\n        __import__('os').system('false')" + tail
    with pytest.raises(tg.TranslateError, match="unknown call"):
        tg.parse_ptf(text, "sample")


def test_missing_p4testgen_is_an_error_naming_the_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("P4TESTGEN", raising=False)
    assert tg.main(["pmqecn"]) == 2
    assert "P4TESTGEN is not set" in capsys.readouterr().err
    not_exec = tmp_path / "p4testgen"
    not_exec.write_text("")
    monkeypatch.setenv("P4TESTGEN", str(not_exec))
    assert tg.main(["pmqecn"]) == 2
    assert f"P4TESTGEN={not_exec}: not executable" in capsys.readouterr().err


def _fake_p4testgen(tmp_path: Path, sample: str) -> Path:
    """A stand-in that writes `sample` where p4testgen writes its PTF file."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    data = tmp_path / "sample.txt"
    data.write_text(sample)
    fake = tmp_path / "fake-p4testgen"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import shutil, sys\n"
        "args = sys.argv[1:]\n"
        "if args == ['--version']:\n"
        "    print('p4testgen 1.2.5 (SHA: 34b86e9 BUILD: Release)'); sys.exit(0)\n"
        "out = args[args.index('--out-dir') + 1]\n"
        f"shutil.copy({str(data)!r}, out + '/pmqecn.py')\n"
    )
    fake.chmod(0o755)
    return fake


def test_generate_then_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vectors"
    monkeypatch.setenv("P4TESTGEN", str(_fake_p4testgen(tmp_path, SAMPLE.read_text())))
    monkeypatch.setenv("P4TESTGEN_INCLUDE", str(tmp_path))
    # The hand-rendered sample is a format sample, not pmqecn's behaviour:
    # its replay is tested apart (test_check_replays_*).
    monkeypatch.setattr(tg, "replay_on_model", lambda path: [])
    assert tg.main(["pmqecn", "--chip", "tofino", "--root", str(root)]) == 0
    written = root / "pmqecn" / "generated" / "tofino" / "p4testgen.yaml"
    assert "# p4c commit: 34b86e9" in written.read_text()
    assert "# p4testgen build: p4c 34b86e9" in written.read_text()
    assert tg.main(["pmqecn", "--chip", "tofino", "--root", str(root), "--check"]) == 0
    # Another build's concrete tests (here another coverage figure) pass the
    # check that travels, and fail the exact one.
    changed = SAMPLE.read_text().replace("coverage: 0.46", "coverage: 0.47")
    monkeypatch.setenv("P4TESTGEN", str(_fake_p4testgen(tmp_path / "x", changed)))
    assert tg.main(["pmqecn", "--chip", "tofino", "--root", str(root), "--check"]) == 0
    capsys.readouterr()
    args = ["pmqecn", "--chip", "tofino", "--root", str(root), "--check", "--exact"]
    assert tg.main(args) == 1
    assert "differs from a fresh p4testgen run" in capsys.readouterr().err


def test_check_replays_committed_and_fresh_tests_on_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vectors"
    monkeypatch.setenv("P4TESTGEN", str(_fake_p4testgen(tmp_path, SAMPLE.read_text())))
    monkeypatch.setenv("P4TESTGEN_INCLUDE", str(tmp_path))
    monkeypatch.setattr(tg, "replay_on_model", lambda path: [])
    assert tg.main(["pmqecn", "--chip", "tofino", "--root", str(root)]) == 0
    monkeypatch.setattr(tg, "replay_on_model", lambda path: ["p4testgen_3: output differs"])
    capsys.readouterr()
    assert tg.main(["pmqecn", "--chip", "tofino", "--root", str(root), "--check"]) == 1
    err = capsys.readouterr().err
    assert "committed test p4testgen_3: output differs" in err
    seed = tg.SEARCH["pmqecn"].seeds["tofino"]
    assert f"fresh test (seed {seed}) p4testgen_3: output differs" in err


def test_replay_on_model_finds_a_test_the_model_does_not_reproduce(tmp_path: Path) -> None:
    committed = REPO / "ptf_tests" / "vectors" / "dadctcp" / "generated" / "tofino"
    assert tg.replay_on_model(committed / "p4testgen.yaml") == []
    text = (committed / "p4testgen.yaml").read_text()
    # One expected output port moved: the model no longer agrees.
    edited = re.sub(r"(expect:\n\s+- port: )(\d+)", lambda m: m.group(1) + "15", text, count=1)
    assert edited != text
    path = tmp_path / "dadctcp" / "generated" / "tofino" / "p4testgen.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(edited)
    failures = tg.replay_on_model(path)
    assert len(failures) == 1, failures


def test_a_seed_that_falls_short_is_followed_by_the_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Coverage moves with the p4testgen build: where the program's seed
    leaves unexplained statements below the floor, the next seed is tried
    and the first that covers is kept."""
    root = tmp_path / "vectors"
    fake = _fake_p4testgen(tmp_path, SAMPLE.read_text())
    short = tmp_path / "short.txt"
    short.write_text(
        "============ Test 1: Nodes covered: 0.5 (2/4) ============\n"
        "Not covered program nodes:\n"
        "\ttna/p4qcn/p4qcn.p4\\282: hdr.ipv4.ecn = 3;\n"
    )
    fake.write_text(
        fake.read_text()
        + "seed = args[args.index('--seed') + 1]\n"
        + f"print(open({str(short)!r}).read() if seed != '4' else '')\n"
    )
    monkeypatch.setenv("P4TESTGEN", str(fake))
    monkeypatch.setenv("P4TESTGEN_INCLUDE", str(tmp_path))
    monkeypatch.setattr(tg, "replay_on_model", lambda path: [])
    capsys.readouterr()
    assert tg.main(["p4qcn", "--chip", "tofino", "--root", str(root)]) == 0
    err = capsys.readouterr().err
    assert "seed 1 covers 50.0%" in err and "(seed 4)" in err
    assert "# seed: 4" in (root / "p4qcn" / "generated" / "tofino" / "p4testgen.yaml").read_text()
    # A seed given on the command line is the only one tried.
    assert tg.main(["p4qcn", "--chip", "tofino", "--root", str(root), "--seed", "1"]) == 1


# --- S-PIE's custom CRC hashes (p4testgen internal error) --------------------

REPRO = REPO / "tests" / "data" / "p4testgen_repros" / "spie_range_check.p4"


def test_custom_hashes_become_the_same_crc_or_unknown() -> None:
    original = (REPO / "tna" / "spie" / "sketch.p4").read_text()
    rewritten, notes = tg.custom_hash_substitutes(original)
    assert "HashAlgorithm_t.CUSTOM" not in rewritten
    assert notes == [
        "hasher0: CUSTOM poly0 (0x8005) -> CRC16 (the same CRC)",
        "hasher1: CUSTOM poly1 (0x1021) -> RANDOM (unknown to p4testgen)",
        "hasher2: CUSTOM poly2 (0x3D65) -> RANDOM (unknown to p4testgen)",
    ]
    # Line for line: p4testgen's coverage and traces point into sketch.p4.
    before, after = original.splitlines(), rewritten.splitlines()
    assert len(before) == len(after)
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    assert [a.strip() for _, a in changed] == [
        "Hash<bit<16>>(HashAlgorithm_t.CRC16) hasher0;",
        "Hash<bit<16>>(HashAlgorithm_t.RANDOM) hasher1;",
        "Hash<bit<16>>(HashAlgorithm_t.RANDOM) hasher2;",
    ]
    # A program without one is run as it is.
    pmqecn = (REPO / "tna" / "pmqecn" / "pmqecn.p4").read_text()
    assert tg.custom_hash_substitutes(pmqecn) == (pmqecn, [])


def test_a_polynomial_the_translator_cannot_read_is_named() -> None:
    src = "Hash<bit<16>>(HashAlgorithm_t.CUSTOM, elsewhere) h;\n"
    with pytest.raises(tg.TestgenError, match="Hash h uses CRCPolynomial elsewhere"):
        tg.custom_hash_substitutes(src)


def test_spie_runs_from_the_rewritten_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The stand-in refuses spie.p4 itself, as p4testgen at 34b86e9 does.
    data = tmp_path / "sample.txt"
    data.write_text(SAMPLE.read_text())
    fake = tmp_path / "fake-p4testgen"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import pathlib, shutil, sys\n"
        "args = sys.argv[1:]\n"
        "if args == ['--version']:\n"
        "    print('p4testgen 1.2.5 (SHA: 34b86e9 BUILD: Release)'); sys.exit(0)\n"
        "src = pathlib.Path(args[-1])\n"
        # The hashes are in sketch.p4, which the copy includes from beside it.
        "assert (src.parent / 'sketch.p4').is_file()\n"
        "if any('HashAlgorithm_t.CUSTOM' in f.read_text() for f in src.parent.glob('*.p4')):\n"
        "    print('Internal error: vector::_M_range_check'); sys.exit(1)\n"
        "includes = [args[i + 1] for i, a in enumerate(args) if a == '-I']\n"
        f"assert {str(REPO / 'tna' / 'spie')!r} in includes, includes\n"
        "out = args[args.index('--out-dir') + 1]\n"
        f"shutil.copy({str(data)!r}, out + '/spie.py')\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("P4TESTGEN", str(fake))
    monkeypatch.setenv("P4TESTGEN_INCLUDE", str(tmp_path))
    root = tmp_path / "vectors"
    assert tg.main(["spie", "--chip", "tofino", "--root", str(root)]) == 0
    text = (root / "spie" / "generated" / "tofino" / "p4testgen.yaml").read_text()
    assert "#   hasher1: CUSTOM poly1 (0x1021) -> RANDOM (unknown to p4testgen)" in text
    seed = tg.SEARCH["spie"].seeds["tofino"]
    assert f"--path-selection GREEDY_STATEMENT_SEARCH --seed {seed} --max-tests 350" in text


def _repro(binary: str, *defines: str) -> subprocess.CompletedProcess[str]:
    includes = tg.include_dirs(binary)
    with tempfile.TemporaryDirectory() as out:
        cmd = [binary, *tg.testgen_flags("tofino", 1, 5), *defines]
        for inc in includes:
            cmd += ["-I", inc]
        cmd += ["--out-dir", out, str(REPRO)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.skipif(not os.environ.get("P4TESTGEN"), reason="needs P4TESTGEN")
def test_the_reproducer_still_reproduces() -> None:
    # When this fails, p4testgen handles CUSTOM hashes: drop
    # custom_hash_substitutes and regenerate S-PIE with its real CRCs.
    binary = tg.find_p4testgen()
    custom = _repro(binary)
    assert custom.returncode != 0
    assert "vector::_M_range_check" in custom.stdout + custom.stderr
    predefined = _repro(binary, "-DPREDEFINED")
    assert predefined.returncode == 0, predefined.stderr[-2000:]


def _line_of(path: str, text: str) -> int:
    """Where `text` stands in the P4 today: the canned report follows the
    source, so an edit above it (a header, a moved control) moves it too."""
    return (REPO / path).read_text().splitlines().index(text) + 1


_EXTRACT = _line_of("tna/p4qcn/p4qcn.p4", "        pkt.extract(hdr.fb_mirror);")
_REBUILD = _line_of(
    "tna/include/feedback.p4", "        hdr.ethernet.dst_addr = hdr.fb_mirror.orig_src_mac;"
)
# What p4testgen --print-coverage prints after each test (p4c 34b86e9,
# lib/test_backend.cpp and the coverage printer): the running figure, then
# the statements still uncovered, each "\t<file>\<line>: <statement>".
_COVERAGE_OUTPUT = f"""\
============ Test 1: Nodes covered: 0.5 (2/4) ============
Not covered program nodes:
\ttna/p4qcn/p4qcn.p4\\{_EXTRACT}: pkt.extract<fb_mirror_h>(hdr.fb_mirror);
\ttna/p4qcn/../include/feedback.p4\\{_REBUILD}: hdr.ethernet.dst_addr = hdr.fb_mirror.orig_src_mac;
\ttna/p4qcn/p4qcn.p4\\282: hdr.ipv4.ecn = 3;
tna/p4qcn/p4qcn.p4(260): warning: Key TaintedExpression(bit<5>) of table x is tainted.
    table feedback_probability {{
============ Test 2: Nodes covered: 0.75 (3/4) ============
Not covered program nodes:
\ttna/p4qcn/p4qcn.p4\\{_EXTRACT}: pkt.extract<fb_mirror_h>(hdr.fb_mirror);
\ttna/p4qcn/../include/feedback.p4\\{_REBUILD}: hdr.ethernet.dst_addr = hdr.fb_mirror.orig_src_mac;
"""


def test_coverage_is_the_last_tests() -> None:
    cov = tg.parse_coverage(_COVERAGE_OUTPUT)
    assert cov is not None
    assert (cov.covered, cov.statements) == (3, 4)
    assert [(u.file, u.line) for u in cov.uncovered] == [
        ("tna/p4qcn/p4qcn.p4", _EXTRACT),
        ("tna/include/feedback.p4", _REBUILD),
    ]
    assert tg.parse_coverage("no report here") is None


def test_enclosing_blocks_by_braces_not_comments() -> None:
    src = (
        "/* control Fake { */\n"
        "parser P(packet_in pkt) {\n"
        "    state start {\n"
        "        pkt.extract(h);  // {\n"
        "    }\n"
        "}\n"
        "control C(inout h_t h)(bit<4> t) {\n"
        "    RegisterAction<bit<32>, bit<8>, bit<1>>(r) ra = {\n"
        "        void apply(inout bit<32> v) {\n"
        "            if (v == 0) {\n"
        "                v = 1;\n"
        "            }\n"
        "        }\n"
        "    };\n"
        "    apply { }\n"
        "}\n"
    )
    blocks = tg.enclosing_blocks(src)
    assert blocks[4] == ["parser P", "state start"]
    assert blocks[6] == ["parser P"]
    assert blocks[11] == ["control C", "RegisterAction ra"]
    assert blocks[15] == ["control C"]
    assert blocks[17] == []


def test_every_p4qcn_mirror_statement_has_its_blocker() -> None:
    """The blockers are found in the real sources: p4qcn's feedback-copy
    state and FeedbackRebuild are p4testgen's Mirror.emit no-op; a statement
    elsewhere has none."""
    p4qcn = (REPO / "tna" / "p4qcn" / "p4qcn.p4").read_text().splitlines()
    copy_line = next(i for i, t in enumerate(p4qcn, 1) if "pkt.extract(hdr.fb_mirror)" in t)
    mark_line = next(i for i, t in enumerate(p4qcn, 1) if "hdr.ipv4.ecn = ECN_CE" in t)
    feedback = (REPO / "tna" / "include" / "feedback.p4").read_text().splitlines()
    rebuild_line = next(i for i, t in enumerate(feedback, 1) if "hdr.udp.setValid()" in t)
    for file, line, blocked in [
        ("tna/p4qcn/p4qcn.p4", copy_line, True),
        ("tna/include/feedback.p4", rebuild_line, True),
        ("tna/p4qcn/p4qcn.p4", mark_line, False),
    ]:
        u = tg.Uncovered(file, line, "s")
        b = tg.blocker_for("p4qcn", u, tg.enclosing_blocks_of(file).get(line, []))
        assert (b is not None) == blocked, (file, line)
        # Only for the program it was written for.
        assert tg.blocker_for("aqm", u, tg.enclosing_blocks_of(file).get(line, [])) is None


def test_generate_writes_the_coverage_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vectors"
    fake = _fake_p4testgen(tmp_path, SAMPLE.read_text())
    out = tmp_path / "out.txt"
    out.write_text(_COVERAGE_OUTPUT)
    fake.write_text(fake.read_text() + f"print(open({str(out)!r}).read())\n")
    monkeypatch.setenv("P4TESTGEN", str(fake))
    monkeypatch.setenv("P4TESTGEN_INCLUDE", str(tmp_path))
    assert tg.main(["p4qcn", "--chip", "tofino", "--root", str(root)]) == 0
    report = safe_yaml.load_file(root / "p4qcn" / "generated" / "tofino" / "coverage.yaml")
    assert (report["statements"], report["covered"], report["coverage"]) == (4, 3, 0.75)
    assert [r["blocked_by"] for r in report["uncovered"]] == ["Mirror.emit is a no-op"] * 2
    assert "no-op" in report["blockers"]["Mirror.emit is a no-op"]
    assert (
        "--path-selection GREEDY_STATEMENT_SEARCH"
        in (root / "p4qcn" / "generated" / "tofino" / "p4testgen.yaml").read_text()
    )
    monkeypatch.setattr(tg, "replay_on_model", lambda path: [])
    assert tg.main(["p4qcn", "--chip", "tofino", "--root", str(root), "--check"]) == 0
    # A run that reports other statements fails the exact check on coverage.yaml.
    out.write_text(_COVERAGE_OUTPUT.replace(f"\\{_EXTRACT}:", f"\\{_EXTRACT + 1}:"))
    capsys.readouterr()
    args = ["p4qcn", "--chip", "tofino", "--root", str(root), "--check", "--exact"]
    assert tg.main(args) == 1
    assert "coverage.yaml: differs from a fresh p4testgen run" in capsys.readouterr().err


def test_resubmission_becomes_the_drop_it_is_from_outside() -> None:
    """p4testgen cannot step Resubmit.emit; S-PIE's copy drops on the first
    pass instead, line for line, and a program without resubmission is run
    as it is."""
    originals = tg.program_sources("spie")
    # The Resubmit and its emit are in spie.p4, the verdict's resubmit_type
    # in verdict.p4: the copy rewrites both.
    assert {p.name for p in originals} >= {"spie.p4", "verdict.p4", "sketch.p4"}
    copies, notes = tg.p4testgen_copies(originals)
    for path, rewritten in copies.items():
        assert "resubmit_type = " not in rewritten, path
        assert "resubmit.emit" not in rewritten, path
        assert len(rewritten.splitlines()) == len(originals[path].splitlines()), path
    assert "resubmit_type = " in originals[REPO / "tna" / "spie" / "verdict.p4"]
    assert notes == [
        "hasher0: CUSTOM poly0 (0x8005) -> CRC16 (the same CRC)",
        "hasher1: CUSTOM poly1 (0x1021) -> RANDOM (unknown to p4testgen)",
        "hasher2: CUSTOM poly2 (0x3D65) -> RANDOM (unknown to p4testgen)",
        "resubmit_type = ... -> drop_ctl = 1 (2x: the first pass's drop)",
        "resubmit.emit(...) -> ; (2x: p4testgen cannot step it)",
    ]
    pmqecn = (REPO / "tna" / "pmqecn" / "pmqecn.p4").read_text()
    assert tg.p4testgen_copy(pmqecn) == (pmqecn, [])
