/// Arithmetic in GF(2⁸) as QR codes use it: the field's elements are bytes, reduced by the primitive polynomial
/// x⁸ + x⁴ + x³ + x² + 1 (0x11D), with α = 2 as generator.
enum GaloisField {
    /// αⁱ for i in 0..<255.
    static let exponents: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 255)
        var value = 1
        for index in 0..<255 {
            table[index] = UInt8(value)
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        return table
    }()

    /// log_α(x) for x in 1...255 (the entry for 0 is unused).
    static let logarithms: [Int] = {
        var table = [Int](repeating: 0, count: 256)
        for (power, value) in Self.exponents.enumerated() {
            table[Int(value)] = power
        }
        return table
    }()

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        guard a != 0, b != 0 else { return 0 }
        return Self.exponents[(Self.logarithms[Int(a)] + Self.logarithms[Int(b)]) % 255]
    }
}

/// Reed–Solomon error correction of one block: the remainder of the data, times x^degree, divided by the generator
/// polynomial (x − α⁰)(x − α¹)…(x − α^(degree−1)).
struct ReedSolomonEncoder {
    /// The generator's coefficients below its leading 1, highest power first.
    let generator: [UInt8]

    init(degree: Int) {
        precondition((1...255).contains(degree))
        // Start from 1 and multiply by (x + αⁱ) for each i (minus is plus in GF(2⁸)); coefficients highest power first.
        var coefficients: [UInt8] = [1]
        for power in 0..<degree {
            let root = GaloisField.exponents[power]
            var product = coefficients + [0]
            for index in 1..<product.count {
                product[index] ^= GaloisField.multiply(coefficients[index - 1], root)
            }
            coefficients = product
        }
        self.generator = Array(coefficients.dropFirst())
    }

    /// The `generator.count` error-correction codewords of `data`.
    func remainder(of data: ArraySlice<UInt8>) -> [UInt8] {
        var remainder = [UInt8](repeating: 0, count: self.generator.count)
        for byte in data {
            let factor = byte ^ remainder.removeFirst()
            remainder.append(0)
            for index in remainder.indices {
                remainder[index] ^= GaloisField.multiply(self.generator[index], factor)
            }
        }
        return remainder
    }
}
