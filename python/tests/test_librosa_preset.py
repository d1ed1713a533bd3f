"""`gpufeed.mel(audio, sr, preset="librosa")` is `librosa.feature.melspectrogram(y=audio,
sr=sr)` with every default (issue 41), checked against librosa's own output on a real
LJSpeech clip; `preset="librosa-tts"` keeps what `"librosa"` meant before."""

from __future__ import annotations

import json
import pathlib
import wave

import numpy as np

import gpufeed

from conftest import SHARED

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"


def read_wav(path: pathlib.Path) -> tuple[np.ndarray, int]:
    """16-bit PCM as soundfile (and so librosa) reads it: x / 32768, float32."""
    with wave.open(str(path), "rb") as w:
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
        return pcm.astype(np.float32) / 32768.0, w.getframerate()


def test_librosa_preset_is_librosa_melspectrogram_with_every_default():
    """Against `librosa.feature.melspectrogram(y=y, sr=sr)` on a real LJSpeech clip
    (fixtures/librosa_defaults.json, written by fixtures/make_librosa_reference.py).

    Tolerance, from float32 rounding: both sides round the power spectrum to float32 and
    sum at most n_fft / 2 + 1 = 1025 non-negative float32 products per band, whose
    rounding error is at most 1025 units of 2^-24 relative each (Higham, "Accuracy and
    Stability of Numerical Algorithms", 2nd ed., sec. 4.2: |error| <= (n-1) u sum|x| for
    a recursive sum); the two sides may err in opposite directions, so twice that.
    """
    ref = json.loads((FIXTURES / "librosa_defaults.json").read_text())
    y, sr = read_wav(SHARED / "ljspeech-mini" / "wavs" / ref["clip"])
    assert (sr, len(y)) == (ref["sr"], ref["samples"])
    ours = gpufeed.mel(y, sr, preset="librosa")
    assert list(ours.shape) == ref["shape"]  # [frames, n_mels] = [1 + len // 512, 128]
    rtol = 2 * (2048 // 2 + 1) * 2.0**-24
    worst = 0.0
    for frame, theirs in ref["frames"].items():
        theirs = np.asarray(theirs, dtype=np.float64)
        mine = ours[int(frame)].astype(np.float64)
        np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=0, err_msg=f"frame {frame}")
        nz = theirs > 0
        worst = max(worst, float(np.max(np.abs(mine[nz] - theirs[nz]) / theirs[nz])))
    print(f"preset='librosa' vs librosa {ref['librosa']}: max relative error {worst:.2e} (tolerance {rtol:.2e})")


def test_librosa_tts_preset_keeps_the_old_meaning():
    """`preset="librosa-tts"`: librosa's power mel on the tts frames (1024/256/80 mels to
    8 kHz), what `preset="librosa"` gave before it meant librosa's own defaults."""
    y, sr = read_wav(SHARED / "ljspeech-mini" / "wavs" / "LJ001-0008.wav")
    old = gpufeed.mel(y, sr, preset="librosa-tts")
    assert old.shape == (1 + len(y) // 256, 80)
    same = gpufeed.mel(
        y, sr, n_fft=1024, hop_length=256, win_length=1024, n_mels=80, fmax=8000.0,
        power=2.0, pad_mode="constant", log="none",
    )
    np.testing.assert_array_equal(old, same)
