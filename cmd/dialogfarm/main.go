// Command dialogfarm produces supervised fine-tuning data for IDE code
// assistants by driving a real editor and its Q&A plugin.
//
// This package is the only place that reads flags, environment variables
// and the config file (viper); every stage receives a typed config struct.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"dialogfarm/internal/buildinfo"
	"dialogfarm/pool"
)

func main() {
	// SIGINT or SIGTERM cancels ctx, which every stage watches; a second
	// signal, after the first was seen, ends the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() { <-ctx.Done(); stop() }()
	// So does a closed stdout or stderr pipe (SIGPIPE would end the
	// process and leave a drive's editor running).
	ctx, unwatch := stopOnClosedOutput(ctx, int(os.Stdout.Fd()), int(os.Stderr.Fd()))
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cause := context.Cause(ctx) // nil unless a signal came or the output closed
	unwatch()
	stop()
	if cause != nil {
		fmt.Fprintf(os.Stderr, "dialogfarm: stopped (%v); files already written are whole, run and drive resume where they stopped\n", cause)
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "dialogfarm:", err)
		}
		os.Exit(130)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dialogfarm:", err)
		os.Exit(1)
	}
}

// app carries what every subcommand shares: the output streams, a viper
// instance (never the global one) and the logger built from flags.
type app struct {
	stdout, stderr io.Writer
	v              *viper.Viper
	log            *zap.Logger
	verbose        bool
	logFormat      string
	// configPath is the config file read (--config or DIALOGFARM_CONFIG).
	configPath string
	// keyAllow is the config file's allow lists of the key rules.
	keyAllow keyAllow
}

// run builds the command tree and executes it with args.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a := &app{stdout: stdout, stderr: stderr, v: viper.New()}
	root := newRoot(a)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if errors.Is(err, pool.ErrKeyPolicy) {
		err = fmt.Errorf("%w\n(to send it anyway, write in the config file allow_key_env: true or allow_insecure: true on its pool member or judge endpoint, or the top-level lists %s: [VARIABLE] or %s: [HOST:PORT] for any model)",
			err, allowKeyEnvKey, allowInsecureKey)
	}
	return err
}

// newRoot builds the command tree on a.
func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:           "dialogfarm",
		Short:         "Simulate developers in a real editor to produce SFT data for code assistants",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Version(),
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.init(cmd)
		},
		PersistentPostRun: func(*cobra.Command, []string) {
			if a.log != nil {
				_ = a.log.Sync()
			}
		},
	}
	root.SetVersionTemplate("dialogfarm {{.Version}}\n")
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.PersistentFlags().String("config", "", "config file (dialogfarm.yaml; default $DIALOGFARM_CONFIG); DIALOGFARM_* env vars and flags override it")
	root.PersistentFlags().BoolVarP(&a.verbose, "verbose", "v", false, "debug logging")
	root.PersistentFlags().StringVar(&a.logFormat, "log-format", logConsole, "log format on stderr: console (readable lines) or json (one JSON object a line, with time; progress as log entries)")
	for _, add := range commands {
		root.AddCommand(add(a))
	}
	checkRanges(root)
	return root
}

// commands lists the subcommand constructors; each lives in its own file.
var commands = []func(*app) *cobra.Command{
	doctorCmd,
	driveCmd,
	runCmd,
	exportCmd,
	judgeCmd,
	judgeEvalCmd,
	analyzeCmd,
	planCmd,
	tuneCmd,
	profilesCmd,
	configsCmd,
	reportCmd,
	pipelineCmd,
	tasksCmd,
	mcpCmd,
	farmCmd,
	workerCmd,
	statusCmd,
	serveCmd,
	adaptersCmd,
	redactCmd,
}

// init reads the config file and environment into the flags (strictly:
// see config.go), binds the flags to a.v and builds the logger.
func (a *app) init(cmd *cobra.Command) error {
	path, err := readConfigFile(cmd, a.v)
	if err != nil {
		return err
	}
	a.configPath = path
	if path != "" {
		if a.keyAllow, err = readKeyAllow(a.v, path); err != nil {
			return err
		}
	}
	if err := applySettings(cmd, a.v, path); err != nil {
		return err
	}
	a.v.SetEnvPrefix("DIALOGFARM")
	a.v.SetEnvKeyReplacer(strings.NewReplacer("-", "_", ".", "_"))
	a.v.AutomaticEnv()
	var bindErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err := a.v.BindPFlag(flagKey(f.Name), f); err != nil && bindErr == nil {
			bindErr = fmt.Errorf("bind flag --%s: %w", f.Name, err)
		}
	})
	if bindErr != nil {
		return bindErr
	}
	// The pool: and judge: sections must decode for every command, not
	// only for those that use them, so a broken section is never ignored.
	settings, err := a.loadPoolSettings("")
	if err != nil {
		return err
	}
	level := zapcore.InfoLevel
	if a.verbose {
		level = zapcore.DebugLevel
	}
	log, err := newLogger(a.logFormat, a.stderr, level)
	if err != nil {
		return err
	}
	all := []poolSettings{settings}
	if path := a.v.GetString("pool-file"); path != "" {
		if s, err := a.loadPoolSettings(path); err == nil {
			all = append(all, s)
		}
	}
	keyEnvs := a.keyEnvNames(cmd, all)
	if err := unknownEnv(os.Environ(), settingEnvs(cmd.Root(), all...), keyEnvs); err != nil {
		return err
	}
	// Every API key the command may send is cut from every log line too.
	keys := apiKeys(keyEnvs)
	a.log = log.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return pool.RedactLogs(c, keys...) }))
	return nil
}

// newLogger builds the logger of --log-format: console lines without time
// (the terminal has it), or JSON objects with an ISO 8601 time for log
// collectors.
func newLogger(format string, w io.Writer, level zapcore.Level) (*zap.Logger, error) {
	switch format {
	case logConsole:
		enc := zap.NewDevelopmentEncoderConfig()
		enc.TimeKey = ""
		return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(w), level)), nil
	case logJSON:
		enc := zap.NewProductionEncoderConfig()
		enc.EncodeTime = zapcore.ISO8601TimeEncoder
		return zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(w), level)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want %s or %s", format, logConsole, logJSON)
}
