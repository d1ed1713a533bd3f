//! gpufeed-data (under construction)
