/// SHA-256 (FIPS 180-4), written here because the package takes no dependencies and
/// Foundation on Linux has no digest API.
enum SHA256 {
    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// The digest of `message` as 64 lowercase hexadecimal digits.
    static func hexDigest(of message: [UInt8]) -> String {
        digest(of: message).map { byte in
            let digits = String(byte, radix: 16)
            return byte < 16 ? "0" + digits : digits
        }.joined()
    }

    /// The 32-byte digest of `message`.
    static func digest(of message: [UInt8]) -> [UInt8] {
        var state: [UInt32] = [
            0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
        ]
        // Only the last, partial block is copied to be padded; the whole blocks are hashed where they
        // are (copying a large schema's canonical text just to pad it cost a tenth of the hashing).
        let wholeBlocksEnd = message.count - message.count % 64
        var tail = Array(message[wholeBlocksEnd...])
        tail.append(0x80)
        while tail.count % 64 != 56 {
            tail.append(0)
        }
        let bitLength = UInt64(message.count) &* 8
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }

        // Raw pointers throughout: their subscripts and the integer operators are transparent, so
        // even a debug build (which the build plugin's tool usually is) runs this at a useful speed.
        let schedule = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)
        defer { schedule.deallocate() }
        message.withUnsafeBufferPointer { message in
            tail.withUnsafeBufferPointer { tail in
                roundConstants.withUnsafeBufferPointer { constants in
                    state.withUnsafeMutableBufferPointer { state in
                        for blocks in [UnsafeBufferPointer(rebasing: message[..<wholeBlocksEnd]), tail] {
                            var blockStart = 0
                            while blockStart < blocks.count {
                                compress(
                                    blocks.baseAddress! + blockStart,
                                    into: state.baseAddress!,
                                    schedule: schedule,
                                    constants: constants.baseAddress!
                                )
                                blockStart += 64
                            }
                        }
                    }
                }
            }
        }
        return state.flatMap { word in
            [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> UInt32($0)) }
        }
    }

    /// Mixes one 64-byte block into the state. Rotations are written out (`x &>> n | x &<< (32 - n)`)
    /// rather than called, and the loops count by hand rather than iterate ranges, for the same
    /// reason as the pointers; masking shifts, because a debug build checks the shift amount of
    /// every `>>` and `<<` (all amounts here are below 32).
    private static func compress(
        _ block: UnsafePointer<UInt8>,
        into state: UnsafeMutablePointer<UInt32>,
        schedule: UnsafeMutablePointer<UInt32>,
        constants: UnsafePointer<UInt32>
    ) {
        var word = 0
        while word < 16 {
            let offset = word * 4
            schedule[word] =
                UInt32(block[offset]) &<< 24 | UInt32(block[offset + 1]) &<< 16
                | UInt32(block[offset + 2]) &<< 8 | UInt32(block[offset + 3])
            word += 1
        }
        while word < 64 {
            let x = schedule[word - 15]
            let y = schedule[word - 2]
            // σ0 and σ1 with their two rotations nested, as `mix` does with Σ0 and Σ1.
            let x11 = (x &>> 11 | x &<< 21) ^ x
            let s0 = (x11 &>> 7 | x11 &<< 25) ^ (x &>> 3)
            let y2 = (y &>> 2 | y &<< 30) ^ y
            let s1 = (y2 &>> 17 | y2 &<< 15) ^ (y &>> 10)
            schedule[word] = schedule[word - 16] &+ s0 &+ schedule[word - 7] &+ s1
            word += 1
        }
        var a = state[0]
        var b = state[1]
        var c = state[2]
        var d = state[3]
        var e = state[4]
        var f = state[5]
        var g = state[6]
        var h = state[7]
        // Eight rounds a pass, each naming the working variables one place further along (as
        // FIPS 180-4's reference code does), so that no round moves all eight down by one: that
        // shuffle, with the registers it held, was half the instructions of a block.
        var round = 0
        while round < 64 {
            mix(a, b, c, &d, e, f, g, &h, constants[round] &+ schedule[round])
            mix(h, a, b, &c, d, e, f, &g, constants[round + 1] &+ schedule[round + 1])
            mix(g, h, a, &b, c, d, e, &f, constants[round + 2] &+ schedule[round + 2])
            mix(f, g, h, &a, b, c, d, &e, constants[round + 3] &+ schedule[round + 3])
            mix(e, f, g, &h, a, b, c, &d, constants[round + 4] &+ schedule[round + 4])
            mix(d, e, f, &g, h, a, b, &c, constants[round + 5] &+ schedule[round + 5])
            mix(c, d, e, &f, g, h, a, &b, constants[round + 6] &+ schedule[round + 6])
            mix(b, c, d, &e, f, g, h, &a, constants[round + 7] &+ schedule[round + 7])
            round += 8
        }
        state[0] = state[0] &+ a
        state[1] = state[1] &+ b
        state[2] = state[2] &+ c
        state[3] = state[3] &+ d
        state[4] = state[4] &+ e
        state[5] = state[5] &+ f
        state[6] = state[6] &+ g
        state[7] = state[7] &+ h
    }

    /// One round: `d` takes the new `e` and `h` the new `a`; `input` is the round's constant plus
    /// its schedule word. Fewer operations than the standard's formulas, same values: Σ1(e) is
    /// `rotr(rotr(rotr(e, 14) ^ e, 5) ^ e, 6)` (three rotations, but each of the standard's
    /// needed its own copy of `e`), Σ0(a) likewise, and `choice` and `majority` are the three-
    /// and four-operation forms of `(e & f) ^ (~e & g)` and `(a & b) ^ (a & c) ^ (b & c)`.
    @inline(__always)
    private static func mix(
        _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
        _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32,
        _ input: UInt32
    ) {
        let e14 = (e &>> 14 | e &<< 18) ^ e
        let e5 = (e14 &>> 5 | e14 &<< 27) ^ e
        let sum1 = e5 &>> 6 | e5 &<< 26
        let choice = g ^ (e & (f ^ g))
        let temp1 = h &+ sum1 &+ choice &+ input
        let a9 = (a &>> 9 | a &<< 23) ^ a
        let a11 = (a9 &>> 11 | a9 &<< 21) ^ a
        let sum0 = a11 &>> 2 | a11 &<< 30
        let majority = (a & b) | (c & (a | b))
        d = d &+ temp1
        h = temp1 &+ sum0 &+ majority
    }
}
