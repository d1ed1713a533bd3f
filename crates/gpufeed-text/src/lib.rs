//! gpufeed-text (under construction)
