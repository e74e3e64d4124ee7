//! Where the programs a campaign checks come from: [`generated`] (the `sysy_generator` crate's
//! programs, probed by the reference interpreter) and [`corpus`] (the `.sy` files of a
//! directory, checked as they are).

pub mod corpus;
pub mod generated;
