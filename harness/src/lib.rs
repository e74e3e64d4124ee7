//! The `harness` library: program generators, reference tools and runners used by the
//! `harness` binary and the fuzz targets.

pub mod generators;
