use cuda_std::address_space;

pub fn global() {
    #[address_space(global)]
    static mut G: [u32; 4] = [0; 4];
}

pub fn constant() {
    #[address_space(constant)]
    static mut C: [u32; 4] = [0; 4];
}

pub fn local() {
    #[address_space(local)]
    static mut L: [u32; 4] = [0; 4];
}

pub fn unknown() {
    #[address_space(texture)]
    static mut T: [u32; 4] = [0; 4];
}

pub fn no_argument() {
    #[address_space]
    static mut N: [u32; 4] = [0; 4];
}

fn main() {}
