package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/invokeconf/invokeconf/modelserver"
)

// cmdModel runs the scripted model server (docs/vendor-guide.md).
func cmdModel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("model", stderr)
	addr := fs.String("addr", "127.0.0.1:8090", "listen address (127.0.0.1:0 picks a free port)")
	name := fs.String("model", modelserver.DefaultModel, "the model name GET /v1/models lists (chat completions are answered for any name)")
	waiting := fs.Duration("waiting", modelserver.DefaultWaiting, "how long @waiting holds a response back before anything is sent")
	quiet := fs.Bool("quiet", false, "do not log requests")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *waiting <= 0 {
		return usageError{fmt.Errorf("--waiting must be positive, not %s", *waiting)}
	}
	var logger *slog.Logger
	if !*quiet {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	srv, err := modelserver.Listen(modelserver.Config{Model: *name, Waiting: *waiting, Logger: logger}, *addr)
	if err != nil {
		return usageError{err}
	}
	defer srv.Close()
	fmt.Fprintf(stdout, "invokeconf model server listening on %s\n\n", srv.URL)
	fmt.Fprintf(stdout, "point your agent at it:\n  base URL  %s\n  model     %s\n  API key   any value (none is checked)\n", srv.BaseURL, *name)
	fmt.Fprintf(stdout, "\ntry it:\n  curl -s %s/chat/completions -H 'Content-Type: application/json' -d '{\"model\":\"%s\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello, model\"}]}'\n",
		srv.BaseURL, *name)
	fmt.Fprintln(stdout, "\nPress Ctrl-C to stop.")
	select {
	case <-ctx.Done():
		fmt.Fprintln(stdout, "invokeconf model: stopping")
		return nil
	case <-srv.Done():
		return srv.Err()
	}
}
