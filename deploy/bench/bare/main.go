// Command bare is the floor of deploy/bench/door.sh: plain net/http answering
// every request with one file's bytes under one Content-Type, and nothing
// else (no routing, no middleware), so petal's figure can be read against it.
//
//	bare -addr 127.0.0.1:9001 -body networks.json -type 'application/json'
package main

import (
	"flag"
	"log"
	"net/http"
	"os"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9001", "listen address")
	bodyFile := flag.String("body", "", "file whose bytes every answer carries")
	contentType := flag.String("type", "application/json", "Content-Type of every answer")
	flag.Parse()
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Addr: *addr, ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", *contentType)
		_, _ = w.Write(body)
	})}
	log.Fatal(srv.ListenAndServe())
}
