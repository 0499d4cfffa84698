pub mod durability;
pub mod faulty_fs;
