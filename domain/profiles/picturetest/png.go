// Package picturetest makes pictures for tests: PNGs of any size, depth and
// interlacing, the kind image/png cannot write (it never interlaces), small
// on the wire and costly to decode.
package picturetest

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
)

// adam7 is each interlaced pass's x offset, y offset, x step and y step.
var adam7 = [7][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}

// RGBA is a w × h truecolour-with-alpha PNG of depth 8 or 16 bits, every
// byte of every pixel the same (so it deflates ~700:1), interlaced (Adam7) or not.
func RGBA(w, h, depth int, interlaced bool) []byte {
	perPixel := 4 * depth / 8
	var idat bytes.Buffer
	// BestSpeed: on these repeated rows it deflates ~700:1 (a 4096² 16-bit
	// picture is 180 KB) ten times faster than BestCompression, whose chains
	// took the race-built tests ~50 s per picture.
	z, _ := zlib.NewWriterLevel(&idat, zlib.BestSpeed)
	row := make([]byte, 1+w*perPixel) // filter 0, then the pixels
	for i := 1; i < len(row); i++ {
		row[i] = 0x40
	}
	rows := func(pw, ph int) {
		if pw == 0 || ph == 0 {
			return
		}
		for range ph {
			_, _ = z.Write(row[:1+pw*perPixel])
		}
	}
	if interlaced {
		for _, p := range adam7 {
			rows((w-p[0]+p[2]-1)/p[2], (h-p[1]+p[3]-1)/p[3])
		}
	} else {
		rows(w, h)
	}
	_ = z.Close()

	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = byte(depth), 6 // depth, colour type 6: RGBA
	if interlaced {
		ihdr[12] = 1
	}
	chunk(&out, "IHDR", ihdr)
	chunk(&out, "IDAT", idat.Bytes())
	chunk(&out, "IEND", nil)
	return out.Bytes()
}

func chunk(out *bytes.Buffer, kind string, data []byte) {
	_ = binary.Write(out, binary.BigEndian, uint32(len(data)))
	crc := crc32.NewIEEE()
	crc.Write([]byte(kind))
	crc.Write(data)
	out.WriteString(kind)
	out.Write(data)
	_ = binary.Write(out, binary.BigEndian, crc.Sum32())
}
