pub mod faulty_fs;
