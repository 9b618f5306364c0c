package httpapi

import (
	"compress/gzip"
	"errors"
	"io"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/domain/errs"
)

// Limits of a posted reading (PUT /api/v1/snapshots/:sha256), from the
// contract's rules: 2 MiB on the wire, 32 MiB once inflated. Give the route
// BodyLimit: PostedReadingWireLimit and read it with RequestBodyReader(c,
// PostedReadingInflatedLimit).
const (
	PostedReadingWireLimit     = 2 << 20
	PostedReadingInflatedLimit = 32 << 20
)

// RequestBodyReader is the request body as sent (Content-Encoding identity) or
// inflated (gzip), never yielding more than inflatedLimit bytes. The wire
// bytes are already capped by the route's BodyLimit. Past either cap a read
// fails with 400 bad_input, caused by *BodyTooLargeError. The caller closes
// it.
func RequestBodyReader(c echo.Context, inflatedLimit int64) (io.ReadCloser, error) {
	r := c.Request()
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get(echo.HeaderContentEncoding))); enc {
	case "", "identity":
		return r.Body, nil
	case "gzip", "x-gzip":
		return NewGzipBodyReader(r.Body, inflatedLimit)
	default:
		return nil, errs.Newf(errs.BadInput, "Content-Encoding %s is not accepted", enc).WithHint("send the body plain or gzip")
	}
}

// NewGzipBodyReader inflates the gzip stream compressed and yields at most
// limit inflated bytes. It never inflates more than limit+1 bytes, so a gzip
// bomb costs no more than the cap: one byte past it fails the read with
// *BodyTooLargeError. Closing it closes compressed when that is a Closer.
func NewGzipBodyReader(compressed io.Reader, limit int64) (io.ReadCloser, error) {
	zr, err := gzip.NewReader(compressed)
	if err != nil {
		if _, ok := asBodyTooLarge(err); ok {
			return nil, err
		}
		return nil, errs.New(errs.BadInput, "the body is not valid gzip", "send Content-Encoding: gzip only with a gzip body")
	}
	return &inflatingBody{zr: zr, src: compressed, left: limit, limit: limit}, nil
}

type inflatingBody struct {
	zr    *gzip.Reader
	src   io.Reader
	left  int64
	limit int64
}

func (b *inflatingBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body that ends exactly at the cap from a bomb.
		var one [1]byte
		n, err := b.zr.Read(one[:])
		if n > 0 {
			return 0, bodyTooLarge(humanBytes(b.limit) + " inflated")
		}
		return 0, gzipError(err)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.zr.Read(p)
	b.left -= int64(n)
	return n, gzipError(err)
}

func (b *inflatingBody) Close() error {
	err := b.zr.Close()
	if c, ok := b.src.(io.Closer); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// gzipError keeps io.EOF and the size errors as they are, and makes corrupt
// data bad input rather than an internal error.
func gzipError(err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	if _, ok := asBodyTooLarge(err); ok {
		return err
	}
	return errs.New(errs.BadInput, "the body's gzip data is corrupt", "send a complete gzip stream").WithCause(err)
}

func asBodyTooLarge(err error) (*BodyTooLargeError, bool) {
	return errors.AsType[*BodyTooLargeError](err)
}
