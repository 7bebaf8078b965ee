use cuda_std::address_space;

pub fn not_mut() {
    #[address_space(shared)]
    static TILE: [f32; 16] = [0.0; 16];
}

pub fn not_an_array() {
    #[address_space(shared)]
    static mut COUNT: u32 = 0;
}

pub fn not_a_static() {
    #[address_space(shared)]
    const TILE: [f32; 16] = [0.0; 16];
}

pub fn wrong_initialiser() {
    #[address_space(shared)]
    static mut TILE: [f32; 16] = [0.0; 8];
}

fn main() {}
