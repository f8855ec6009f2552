package cql

import (
	"math"
	"math/bits"
)

// Token returns the token of a partition key as Cassandra's Murmur3Partitioner computes it:
// the first 64 bits of MurmurHash3 x64_128 (seed 0) of the key's serialized bytes (a varchar's
// UTF-8), with Long.MIN_VALUE moved to Long.MAX_VALUE (the partitioner reserves the minimum).
//
// Cassandra's implementation (org.apache.cassandra.utils.MurmurHash.hash3_x64_128) reads the
// tail bytes as Java's signed bytes, so a tail byte ≥ 0x80 is sign-extended before it is
// shifted: the result differs from the reference MurmurHash3 for such keys, and the ring
// follows Cassandra's. Token does the same. An empty key is the minimum token, as in the
// partitioner. It does not allocate.
func Token(key string) int64 {
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	n := len(key)
	if n == 0 {
		return math.MinInt64
	}
	var h1, h2 uint64
	i := 0
	for ; i+16 <= n; i += 16 {
		k1 := le64(key[i : i+8])
		k2 := le64(key[i+8 : i+16])
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
		h1 = bits.RotateLeft64(h1, 27)
		h1 += h2
		h1 = h1*5 + 0x52dce729
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
		h2 = bits.RotateLeft64(h2, 31)
		h2 += h1
		h2 = h2*5 + 0x38495ab5
	}
	tail := key[i:]
	// sx is a byte as Java reads it (signed), widened to 64 bits.
	sx := func(j int) uint64 { return uint64(int64(int8(tail[j]))) }
	var k1, k2 uint64
	switch len(tail) {
	case 15:
		k2 ^= sx(14) << 48
		fallthrough
	case 14:
		k2 ^= sx(13) << 40
		fallthrough
	case 13:
		k2 ^= sx(12) << 32
		fallthrough
	case 12:
		k2 ^= sx(11) << 24
		fallthrough
	case 11:
		k2 ^= sx(10) << 16
		fallthrough
	case 10:
		k2 ^= sx(9) << 8
		fallthrough
	case 9:
		k2 ^= sx(8)
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
		fallthrough
	case 8:
		k1 ^= sx(7) << 56
		fallthrough
	case 7:
		k1 ^= sx(6) << 48
		fallthrough
	case 6:
		k1 ^= sx(5) << 40
		fallthrough
	case 5:
		k1 ^= sx(4) << 32
		fallthrough
	case 4:
		k1 ^= sx(3) << 24
		fallthrough
	case 3:
		k1 ^= sx(2) << 16
		fallthrough
	case 2:
		k1 ^= sx(1) << 8
		fallthrough
	case 1:
		k1 ^= sx(0)
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1, h2 = fmix(h1), fmix(h2)
	h1 += h2
	if t := int64(h1); t != math.MinInt64 {
		return t
	}
	return math.MaxInt64
}

func fmix(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// le64 reads 8 bytes of s little-endian (Java's getblock masks these bytes: unsigned).
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
