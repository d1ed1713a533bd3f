//! gpufeed-audio (under construction)
