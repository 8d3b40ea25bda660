package framework

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// A held port cannot be taken by another server, and a scrape of it fails as against a stopped
// server; once released, a server binds it again.
func TestHoldPort(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	l, err := holdPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	if other, err := net.Listen("tcp", addr); err == nil {
		other.Close()
		t.Fatalf("another listener bound the held %s", addr)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	if resp, err := client.Get("http://" + addr + "/metrics"); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		t.Fatalf("a scrape of the held %s answered %s", addr, resp.Status)
	}
	c := &Component{Addr: addr, hold: l}
	c.release()
	again, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("released %s cannot be bound: %v", addr, err)
	}
	again.Close()
}
