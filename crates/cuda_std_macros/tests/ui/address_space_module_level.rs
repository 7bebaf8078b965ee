use cuda_std::address_space;

// Shared memory belongs to a function body (it becomes a `let` binding there).
#[address_space(shared)]
static mut TILE: [f32; 16] = [0.0; 16];

fn main() {}
