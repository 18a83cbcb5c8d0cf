"""The STANAG 4285 transmitter over real processes: the 7-component assembly
sends the same audio, sample for sample, as the plain program (which the C++
loopback tests decode bit-exact)."""

import subprocess

import pytest

from scabench.errors import ScabenchError
from scabench.paths import program
from scabench.run.runner import run_spec
from scabench.waveforms.stanag4285 import load_split, run_plain

FRAMES = 12
SAMPLES_PER_FRAME = 1024


@pytest.mark.parametrize("mode", ["2400L", "600S"])
def test_seven_components_over_processes_send_the_plain_programs_audio(tmp_path, mode):
    spec = load_split(7, mode=mode, packets=FRAMES, symbol_rate=0, seed=11, audio_file=tmp_path / "sca.raw")
    assert len(spec.hosts) == 7  # a process per component
    result = run_spec(spec)
    assert result.status == "ok"
    assert result.producer.sent == FRAMES
    for stage in result.stages:
        assert stage.received == FRAMES, stage
        assert stage.reordered_from_original == 0, stage
    assert result.cpu.user_s + result.cpu.system_s > 0

    plain = run_plain(mode=mode, packets=FRAMES, symbol_rate=0, seed=11, audio_file=tmp_path / "plain.raw")
    assert plain["audio_samples"] == FRAMES * SAMPLES_PER_FRAME
    sca_audio = (tmp_path / "sca.raw").read_bytes()
    assert len(sca_audio) == FRAMES * SAMPLES_PER_FRAME * 2
    assert sca_audio == (tmp_path / "plain.raw").read_bytes()
    # The sink reports the same digest as a run stat, so runs without a file can be checked too.
    assert result.stats["sink"]["audio_digest"] == plain["audio_digest"]
    assert int(result.stats["sink"]["audio_samples"]) == plain["audio_samples"]


def test_dither_delays_frames_but_not_the_audio():
    # 11 frames at 25600 symbols/s are 10 ms apart: the last is due 100 ms
    # after the first, and a dither only ever delays it.
    plain = run_plain(packets=11, symbol_rate=25600, seed=3)
    dithered = run_plain(packets=11, symbol_rate=25600, seed=3, dither_us=3000)
    assert dithered["wall_s"] >= 0.1
    assert dithered["audio_digest"] == plain["audio_digest"]
    spec = load_split(2, collocated=True, packets=11, symbol_rate=25600, seed=3, dither_us=3000)
    result = run_spec(spec)
    assert result.stats["tx"]["audio_digest"] == plain["audio_digest"]
    # Measured from the first frame's send, which its own dither (< 3 ms) and
    # a busy machine may have delayed past the schedule's origin; unpaced,
    # 11 frames would take a few ms.
    assert result.producer.last_sent_ms >= 90


def test_a_different_seed_gives_different_audio(tmp_path):
    a = run_plain(packets=3, symbol_rate=0, seed=1)
    b = run_plain(packets=3, symbol_rate=0, seed=2)
    assert a["audio_digest"] != b["audio_digest"]


def test_collocated_two_components_send_the_same_audio(tmp_path):
    spec = load_split(2, collocated=True, packets=4, symbol_rate=0, audio_file=tmp_path / "sca.raw")
    assert len(spec.hosts) == 1
    assert run_spec(spec).status == "ok"
    run_plain(packets=4, symbol_rate=0, audio_file=tmp_path / "plain.raw")
    assert (tmp_path / "sca.raw").read_bytes() == (tmp_path / "plain.raw").read_bytes()


def test_plain_program_rejects_a_bad_mode_in_one_line():
    out = subprocess.run(
        [str(program("scabench-s4285")), "--mode", "4800L"], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 2
    assert "unknown STANAG 4285 mode '4800L'" in out.stderr.splitlines()[0]
    with pytest.raises(ScabenchError, match="--symbol_rate must be a number >= 0, not '-5'"):
        run_plain(symbol_rate=-5)
    # An SNR that is no number would read as "no noise" in the output line.
    for snr in ("nan", "inf", "3dB"):
        out = subprocess.run(
            [str(program("scabench-s4285")), "--channel", "none", "--snr_db", snr],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert out.returncode == 2 and f"--snr_db must be a number (dB in 3 kHz) or none, not '{snr}'" in out.stderr


def test_a_bad_mode_in_a_spec_names_the_component(tmp_path):
    spec = load_split(2, mode="9600L", packets=2, symbol_rate=0)
    from scabench.errors import RunError

    with pytest.raises(RunError) as err:
        run_spec(spec)
    assert "9600L" in str(err.value)
