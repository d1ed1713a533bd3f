//! `decode-per-item`: audio or image decoding and feature extraction in `__getitem__` or in
//! a function passed to `Dataset.map` (the tf.data rules call [`check_function`]).

use tree_sitter::Node;

use super::File;

/// Calls that decode a file or compute features from a waveform (canonical names).
fn is_decode(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "librosa.load",
        "librosa.core.load",
        "librosa.stft",
        "librosa.core.stft",
        "librosa.resample",
        "librosa.core.resample",
        "librosa.pyin",
        "soundfile.read",
        "torchaudio.load",
        "scipy.io.wavfile.read",
        "audioread.audio_open",
        "pydub.AudioSegment.from_file",
        "pydub.AudioSegment.from_wav",
        "pydub.AudioSegment.from_mp3",
        "PIL.Image.open",
        "cv2.imread",
        "imageio.imread",
        "imageio.v2.imread",
        "imageio.v3.imread",
        "skimage.io.imread",
        "torchvision.io.read_image",
        "torchvision.io.decode_image",
    ];
    EXACT.contains(&name)
        || name.starts_with("librosa.feature.")
        || name.starts_with("librosa.effects.")
}

/// Reports decoding reachable from `function` (a definition or lambda).
pub(super) fn check_function<'t>(file: &mut File<'t>, function: Node<'t>, context: &str) {
    let hits = file.calls_reaching(function, &is_decode);
    for (call, name) in hits {
        file.hits.push(super::Hit {
            id: "decode-per-item",
            byte: call.start_byte(),
            specific: format!("`{name}` runs for every item, every epoch"),
            context: Some(format!("in a function {context}")),
            fix: "precompute once (`gpufeed precompute --data DIR`) and load arrays per item \
                  (np.load, safetensors); keep only cheap work (crop, pad) per item"
                .to_owned(),
        });
    }
}

/// Every `__getitem__` of the file.
pub(super) fn check_getitem(file: &mut File<'_>) {
    let defs = file
        .functions
        .get("__getitem__")
        .cloned()
        .unwrap_or_default();
    for def in defs {
        check_function(file, def, "called for every item (`__getitem__`)");
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::ids;

    #[test]
    fn getitem_decoding() {
        let bad = "\
import librosa
import soundfile as sf
class Speech:
    def __getitem__(self, i):
        wav, sr = sf.read(self.paths[i])
        return self._mel(wav)
    def _mel(self, wav):
        return librosa.feature.melspectrogram(y=wav)
";
        assert_eq!(
            ids(bad),
            vec![("decode-per-item", 5), ("decode-per-item", 8)]
        );
        let good = "\
import numpy as np
import librosa
class Cached:
    def __getitem__(self, i):
        return np.load(self.paths[i])
def precompute(paths):
    return [librosa.load(p) for p in paths]
";
        assert_eq!(ids(good), vec![]);
    }

    #[test]
    fn mapped_function_decoding() {
        let bad = "\
import tensorflow as tf
import librosa
def load(p):
    return tf.numpy_function(lambda q: librosa.load(q)[0], [p], tf.float32)
ds = tf.data.Dataset.from_tensor_slices(f).map(load, num_parallel_calls=4).batch(2).prefetch(1)
";
        assert_eq!(
            ids(bad),
            vec![("decode-per-item", 4), ("tf-py-function-in-map", 4)]
        );
    }
}
