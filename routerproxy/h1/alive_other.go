//go:build !linux

package h1

// alive cannot peek here without blocking; a closed connection shows as an
// error on first use instead.
func alive(c *conn) bool { return c.br.Buffered() == 0 }
