package faultproxy

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// TestPauserHoldsBothWays: while paused, a connection dialled through a
// Pauser neither writes nor hands over what arrives, Wait parks, and new
// dials wait; on Resume all of it goes on.
func TestPauserHoldsBothWays(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var p Pauser
	c, err := p.Dial(net.DialTimeout)("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()

	if !p.Pause() || p.Pause() {
		t.Fatal("Pause: want true the first time, false when already paused")
	}
	wrote := make(chan error, 1)
	go func() { _, err := c.Write([]byte("ping")); wrote <- err }()
	read := make(chan string, 1)
	go func() {
		b := make([]byte, 4)
		n, _ := io.ReadFull(c, b)
		read <- string(b[:n])
	}()
	parked := make(chan error, 1)
	go func() { parked <- p.Wait(context.Background()) }()
	if _, err := peer.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	peer.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, _ := peer.Read(make([]byte, 4)); n != 0 {
		t.Errorf("the peer received %d bytes written during the pause", n)
	}
	select {
	case s := <-read:
		t.Errorf("read %q during the pause", s)
	case <-parked:
		t.Error("Wait returned during the pause")
	case <-time.After(100 * time.Millisecond):
	}

	p.Resume()
	if err := <-wrote; err != nil {
		t.Fatalf("write after Resume: %v", err)
	}
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 4)
	if _, err := io.ReadFull(peer, b); err != nil || string(b) != "ping" {
		t.Errorf("peer read %q, %v after Resume; want ping", b, err)
	}
	if s := <-read; s != "pong" {
		t.Errorf("client read %q after Resume, want pong", s)
	}
	if err := <-parked; err != nil {
		t.Errorf("Wait: %v", err)
	}
	if p.Paused() || p.Writes() != 1 {
		t.Errorf("Paused %v, Writes %d after Resume; want false, 1", p.Paused(), p.Writes())
	}
}
