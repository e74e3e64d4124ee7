//! Target instruction-set back ends. The project targets one ISA: 32-bit ARM
//! (`armv7ve`, VFPv4, hard-float AAPCS), in [`arm`].

pub mod arm;
