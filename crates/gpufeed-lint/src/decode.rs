//! What counts as per-item heavy work for `decode-per-item` and
//! `decode-per-item-few-workers`: audio or image decoding, resampling, and features (STFT,
//! mel, pitch) computed from a waveform. The project pass (`project.rs`) follows calls from
//! `__getitem__`, `collate_fn`s and functions passed to `Dataset.map` to these calls.

/// Calls that decode a file, resample, or compute features from a waveform (canonical
/// names).
pub(super) fn is_decode(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "librosa.load",
        "librosa.core.load",
        "librosa.stft",
        "librosa.core.stft",
        "librosa.resample",
        "librosa.core.resample",
        "librosa.pyin",
        "librosa.yin",
        "soundfile.read",
        "torchaudio.load",
        "torchaudio.functional.resample",
        "torchaudio.functional.spectrogram",
        "torchaudio.functional.melspectrogram",
        "torch.stft",
        "scipy.io.wavfile.read",
        "scipy.signal.stft",
        "scipy.signal.resample",
        "scipy.signal.resample_poly",
        "resampy.resample",
        "soxr.resample",
        "audioread.audio_open",
        "pydub.AudioSegment.from_file",
        "pydub.AudioSegment.from_wav",
        "pydub.AudioSegment.from_mp3",
        "pyworld.dio",
        "pyworld.harvest",
        "pyworld.stonemask",
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
        || name.starts_with("torchaudio.compliance.kaldi.")
        || is_transform(name)
}

/// Constructors of feature transform objects (calling the object computes the feature):
/// torchaudio's spectrogram, mel, MFCC and resampling modules.
pub(super) fn is_transform(name: &str) -> bool {
    name.strip_prefix("torchaudio.transforms.")
        .is_some_and(|t| {
            matches!(
                t,
                "Spectrogram"
                    | "MelSpectrogram"
                    | "MFCC"
                    | "LFCC"
                    | "Resample"
                    | "MelScale"
                    | "InverseMelScale"
                    | "GriffinLim"
                    | "PitchShift"
                    | "SpeedPerturbation"
            )
        })
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
