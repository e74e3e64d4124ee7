//! Where the programs a campaign checks come from: [`generated`] (the `sysy_generator` crate's
//! programs, probed by the reference interpreter) and [`corpus`] (the `.sy` files of a
//! directory, checked as they are) and [`mutated`] (variants of the programs of seed
//! directories, judged by the reference interpreter).

pub mod corpus;
pub mod generated;
pub mod mutated;
