package profiles_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/profiles"
)

func pngOf(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.NRGBA{R: uint8(x * 7), G: uint8(y * 13), B: 200, A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegOf(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{R: uint8(x * 5), G: 90, B: uint8(y * 3), A: 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func webpFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pngChunk is one PNG chunk with its CRC.
func pngChunk(kind string, data []byte) []byte {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString(kind)
	b.Write(data)
	_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(kind), data...)))
	return b.Bytes()
}

// shortIDAT is p with its pixels' compressed stream cut in half, in a
// well-formed chunk: only decoding the pixels finds it.
func shortIDAT(t testing.TB, p []byte) []byte {
	t.Helper()
	at := bytes.Index(p, []byte("IDAT")) - 4
	n := int(binary.BigEndian.Uint32(p[at:]))
	data := p[at+8 : at+8+n]
	out := append(bytes.Clone(p[:at]), pngChunk("IDAT", data[:n/2])...)
	return append(out, p[at+12+n:]...)
}

// shortScan is j with its scan cut in half, then ended as a JPEG ends.
func shortScan(j []byte) []byte {
	sos := bytes.Index(j, []byte{0xFF, 0xDA})
	cut := sos + (len(j)-sos)/2
	for j[cut-1] == 0xFF {
		cut--
	}
	return append(bytes.Clone(j[:cut]), 0xFF, 0xD9)
}

// bomb is a 1 × 100,000 px PNG of a few hundred bytes, its IHDR then made to
// say 100,000 × 100,000: ten billion pixels, if anyone decoded them.
func bomb(t testing.TB) (tall, huge []byte) {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 100_000))); err != nil {
		t.Fatal(err)
	}
	tall = b.Bytes()
	huge = bytes.Clone(tall)
	ihdr := huge[8 : 8+8+13+4]
	binary.BigEndian.PutUint32(ihdr[8:], 100_000)
	binary.BigEndian.PutUint32(ihdr[8+13:], crc32.ChecksumIEEE(ihdr[4:8+13]))
	return tall, huge
}

func TestRealPicturesAreAccepted(t *testing.T) {
	for _, c := range []struct {
		name, mediaType string
		data            []byte
		w, h            int
	}{
		{"png", profiles.PNG, pngOf(t, 40, 30), 40, 30},
		{"jpeg", profiles.JPEG, jpegOf(t, 64, 48), 64, 48},
		{"webp lossless", profiles.WebP, webpFile(t, "gopher.lossless.webp"), 0, 0},
		{"webp lossy", profiles.WebP, webpFile(t, "blue-purple-pink.lossy.webp"), 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := "data:" + c.mediaType + ";base64," + base64.StdEncoding.EncodeToString(c.data)
			declared, data, err := profiles.DecodeDataURL(url)
			if err != nil {
				t.Fatal(err)
			}
			p, err := profiles.CheckPicture(declared, data)
			if err != nil {
				t.Fatal(err)
			}
			if p.MediaType != c.mediaType || len(p.SHA256) != 64 || !bytes.Equal(p.Bytes, c.data) {
				t.Fatalf("got %s %s", p.MediaType, p.SHA256)
			}
			if c.w > 0 && (p.Width != c.w || p.Height != c.h) {
				t.Fatalf("size %d × %d", p.Width, p.Height)
			}
			if p.Width <= 0 || p.Height <= 0 {
				t.Fatalf("size %d × %d", p.Width, p.Height)
			}
			if !strings.HasPrefix(p.Address(), "/api/v1/media/"+p.SHA256+".") {
				t.Fatal(p.Address())
			}
		})
	}
}

func TestWhatIsNotAPictureIsRefusedWithItsReason(t *testing.T) {
	good := pngOf(t, 8, 8)
	tall, huge := bomb(t)
	iend := bytes.LastIndex(good, []byte("IEND")) - 4
	withText := append(append(bytes.Clone(good[:iend]), pngChunk("tEXt", []byte("Comment\x00<script>alert(1)</script>"))...), good[iend:]...)
	jpg := jpegOf(t, 16, 16)
	jpegWithMarkup := append(append([]byte{0xFF, 0xD8, 0xFF, 0xFE, 0x00, 0x10}, []byte("<html><b>x</b>")...), jpg[2:]...)
	svg := []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)
	webp := webpFile(t, "blue-purple-pink.lossy.webp")
	for _, c := range []struct {
		name     string
		declared string
		data     []byte
		reason   string
	}{
		{"a polyglot: a page after the PNG's end", profiles.PNG, append(bytes.Clone(good), []byte("<html><script>alert(1)</script></html>")...), "after its IEND"},
		{"a polyglot: script in a PNG text chunk", profiles.PNG, withText, "holds markup"},
		{"a polyglot: a page in a JPEG comment", profiles.JPEG, jpegWithMarkup, "holds markup"},
		{"a polyglot: a zip after the JPEG's end", profiles.JPEG, append(bytes.Clone(jpg), []byte("PK\x03\x04rest of an archive")...), "after its end"},
		{"a polyglot: a page after the WebP's end", profiles.WebP, append(bytes.Clone(webp), []byte("<html></html>")...), "after its end"},
		{"an SVG said to be a PNG", profiles.PNG, svg, "SVG"},
		{"a decompression bomb, 1 × 100,000 px", profiles.PNG, tall, "1 × 100000 px; at most 4096 px a side"},
		{"a decompression bomb, 100,000 × 100,000 px", profiles.PNG, huge, "100000 × 100000 px"},
		{"a truncated PNG", profiles.PNG, good[:len(good)/2], "truncated"},
		{"a PNG cut inside its pixels", profiles.PNG, shortIDAT(t, good), "truncated or corrupt"},
		{"a JPEG cut inside its pixels", profiles.JPEG, shortScan(jpegOf(t, 64, 64)), "truncated or corrupt"},
		{"a truncated JPEG", profiles.JPEG, jpg[:len(jpg)*2/3], "truncated"},
		{"a truncated WebP", profiles.WebP, webp[:len(webp)-100], "truncated"},
		{"a JPEG said to be a PNG", profiles.PNG, jpg, "says image/png, but the bytes are image/jpeg"},
		{"text", profiles.PNG, []byte("hello"), "not a PNG, JPEG or WebP"},
		{"nothing", profiles.PNG, nil, "empty"},
		{"over 2 MiB", profiles.PNG, append(bytes.Clone(good), make([]byte, profiles.MaxPictureBytes)...), "over 2 MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := profiles.CheckPicture(c.declared, c.data)
			if err == nil || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("want a refusal saying %q, got %v", c.reason, err)
			}
		})
	}
}

func TestDataURLsRefusedBeforeDecoding(t *testing.T) {
	for _, c := range []struct{ url, reason string }{
		{"data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte("<svg/>")), "SVG is never accepted"},
		{"data:image/svg+xml,<svg/>", "SVG is never accepted"},
		{"data:image/gif;base64,R0lGODlhAQABAAAAACw=", "image/png, image/jpeg or image/webp"},
		{"data:image/png,rawbytes", "must be base64"},
		{"data:image/png;base64,not base64!", "base64 is not valid"},
		{"data:image/png;base64", "without a comma"},
		{"data:image/png;base64," + strings.Repeat("A", base64.StdEncoding.EncodedLen(profiles.MaxPictureBytes)+4), "over 2 MiB"},
	} {
		if _, _, err := profiles.DecodeDataURL(c.url); err == nil || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%.40s: want %q, got %v", c.url, c.reason, err)
		}
	}
}

// The bomb is refused from its header: checking it allocates a few
// kilobytes, not the pixels it claims (ten billion bytes at one a pixel).
func TestADecompressionBombCostsNothing(t *testing.T) {
	_, huge := bomb(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, err := profiles.CheckPicture(profiles.PNG, huge); err == nil {
			t.Fatal("accepted")
		}
	}
	runtime.ReadMemStats(&after)
	if perCheck := (after.TotalAlloc - before.TotalAlloc) / 10; perCheck > 256<<10 {
		t.Fatalf("checking the bomb allocated %d bytes", perCheck)
	}
}

// A picture waiting for room to decode stops waiting when its context ends:
// ErrNoRoomToDecode (the site busy), not a refusal of the picture; with room,
// the same picture is kept.
func TestACheckWaitingForRoomStopsWithItsContext(t *testing.T) {
	avatar := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngOf(t, 64, 64))
	in := profiles.Input{Avatar: &avatar}
	if err := profiles.Decoding.Acquire(t.Context(), profiles.DecodeBytesAtOnce); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := profiles.Check(ctx, in)
	profiles.Decoding.Release(profiles.DecodeBytesAtOnce)
	if !errors.Is(err, profiles.ErrNoRoomToDecode) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want ErrNoRoomToDecode for the deadline, got %v", err)
	}
	var p *profiles.Problem
	if errors.As(err, &p) {
		t.Fatalf("a busy site is not a problem with the picture: %v", err)
	}
	checked, err := profiles.Check(t.Context(), in)
	if err != nil || len(checked.Pictures) != 1 || checked.Pictures[0].Data == nil {
		t.Fatalf("with room: %+v, %v", checked, err)
	}
}
