"""Datasets in other layouts from Python: `precompute(layout=, columns=)`, the speakers and
languages of `Cache`, and `speakers` in every batch."""

from __future__ import annotations

import json
import wave

import numpy as np
import pytest

import gpufeed


def write_wav(path, seconds: float, rate: int = 16000) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = int(seconds * rate)
    t = np.arange(n) / rate
    pcm = (0.3 * np.sin(2 * np.pi * 220 * t) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())


@pytest.fixture()
def nemo_dir(tmp_path):
    """A NeMo manifest: two segments of one recording and a whole file, three speakers'
    worth of labels, two languages, text in three scripts."""
    write_wav(tmp_path / "audio" / "long.wav", 3.0)
    write_wav(tmp_path / "audio" / "short.wav", 0.5)
    lines = [
        {"audio_filepath": "audio/long.wav", "offset": 0.5, "duration": 1.0,
         "text": "Привет, мир", "speaker": "olga", "lang": "ru"},
        {"audio_filepath": "audio/long.wav", "offset": 1.5, "duration": 1.25,
         "text": "日本語のテキスト", "speaker": "ken", "lang": "ja"},
        {"audio_filepath": "audio/short.wav", "duration": 0.5,
         "text": "hello", "speaker": "olga", "lang": "ru"},
    ]
    (tmp_path / "train_manifest.json").write_text(
        "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8")
    return tmp_path


def test_a_nemo_manifest_keeps_speakers_languages_and_segments(nemo_dir, tmp_path):
    cache = gpufeed.precompute(nemo_dir / "train_manifest.json", cache=tmp_path / "c")
    assert cache.layout == "nemo"
    assert cache.speaker_table == ["ken", "olga"]
    assert cache.speakers.tolist() == [1, 0, 1]
    assert cache.languages == ["ru", "ja", "ru"]
    assert cache[1]["speaker"] == "ken" and cache[1]["language"] == "ja"
    assert cache.texts[0] == "Привет, мир"
    # Each segment is its span, not the whole recording.
    report = cache.report
    assert report["layout"] == "nemo" and report["speakers"] == 2 and report["languages"] == 2
    lengths = cache.mel_lengths.tolist()
    assert lengths[0] < lengths[1], "1.0 s and 1.25 s segments of one 3 s file"
    # Non-Latin text round-trips through the cache's own symbol table: no <unk> (id 3).
    assert all(3 not in cache[i]["tokens"].tolist() for i in range(len(cache)))


def test_batches_carry_speakers(nemo_dir, tmp_path):
    cache = gpufeed.precompute(nemo_dir / "train_manifest.json", cache=tmp_path / "c")
    loader = gpufeed.Loader(cache, batch_size=2, workers=0, shuffle=False, pad="longest")
    with loader:
        batches = list(loader)
    speakers = np.concatenate([b["speakers"] for b in batches])
    items = np.concatenate([b["items"] for b in batches])
    assert speakers.dtype == np.int64
    assert speakers.tolist() == cache.speakers[items].tolist()


def test_columns_and_layout_from_python(tmp_path):
    write_wav(tmp_path / "clips" / "a.wav", 0.3)
    write_wav(tmp_path / "clips" / "b.wav", 0.3)
    (tmp_path / "list.csv").write_text(
        'file,transcript,who\nclips/a.wav,"Hello, ""world""",amy\nclips/b.wav,plain,bob\n')
    cache = gpufeed.precompute(
        tmp_path / "list.csv",
        cache=tmp_path / "c",
        layout="table",
        columns={"audio": "file", "text": "transcript", "speaker": "who"},
    )
    assert cache.texts == ['Hello, "world"', "plain"]
    assert cache.speaker_table == ["amy", "bob"]
    with pytest.raises(ValueError, match="unknown layout `timit`"):
        gpufeed.precompute(tmp_path / "list.csv", cache=tmp_path / "c", layout="timit")


def test_a_headerless_id_text_speaker_file_is_refused_then_read_by_position(tmp_path):
    for name in ("a1", "b1"):
        write_wav(tmp_path / "wavs" / f"{name}.wav", 0.3)
    (tmp_path / "metadata.csv").write_text("a1|Guten Tag, wie geht es|anna\nb1|Good day to you|ben\n")
    with pytest.raises(ValueError, match='columns="id,text,speaker"') as e:
        gpufeed.precompute(tmp_path, cache=tmp_path / "c")
    # In Python terms: the keyword argument, not the CLI's `--columns`.
    assert "--columns" not in str(e.value), str(e.value)
    cache = gpufeed.precompute(tmp_path, cache=tmp_path / "c", columns=["id", "text", "speaker"])
    assert cache.texts == ["Guten Tag, wie geht es", "Good day to you"]
    assert cache.speaker_table == ["anna", "ben"]


def test_too_many_skipped_raises_unless_allowed(tmp_path):
    write_wav(tmp_path / "wavs" / "ok.wav", 0.3)
    (tmp_path / "metadata.csv").write_text("ok|fine|fine\ngone|missing audio|missing audio\n")
    with pytest.raises(ValueError, match=r"1 of 2 items \(50.0 %\) were left out"):
        gpufeed.precompute(tmp_path, cache=tmp_path / "c")
    cache = gpufeed.precompute(tmp_path, cache=tmp_path / "c", max_skipped=0.5)
    assert len(cache) == 1 and len(cache.skipped) == 1
