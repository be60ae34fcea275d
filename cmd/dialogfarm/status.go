package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"dialogfarm/farm"
	"dialogfarm/pipeline"
)

func statusCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status RUN",
		Short: "Show a run's progress, rate, ETA and failures, or a shared farm's queue and workers",
		Long: `status RUN reads a run folder: configs recorded ok, failed and
dead-lettered, failed attempts that were retried, the rate and the time
left, failures by class (the step they failed at) and records per
simulator. status --nats URL reads a shared farm: jobs queued and in
flight, results and dead letters (of one run only, when RUN or --run names
it: RUN's farm.json holds its name) and the health of every worker. A run
that has collected every outcome takes its results and dead letters off
the farm: then status RUN, on its folder, shows them.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.status(cmd.Context(), args) },
	}
	addFarmClientFlags(cmd)
	f := cmd.Flags()
	f.String("run", "", "with --nats: count the results of the run of this name only (RUN does it by its folder); none once the run has collected them")
	return cmd
}

func (a *app) status(ctx context.Context, args []string) error {
	if a.v.GetString("nats") != "" {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		js, closeFarm, err := a.farmClient(cctx, "dialogfarm-status")
		if err != nil {
			return err
		}
		defer closeFarm()
		name, err := a.farmRunName(args)
		if err != nil {
			return err
		}
		st, err := farm.ReadStatus(cctx, js, name)
		if err != nil {
			return err
		}
		fmt.Fprint(a.stdout, st.Text(time.Now()))
		return nil
	}
	if len(args) != 1 {
		return errors.New("status: name the run folder (dialogfarm status RUN), or give --nats")
	}
	st, err := pipeline.ReadRunStatus(args[0])
	if err != nil {
		return err
	}
	fmt.Fprint(a.stdout, st.Text())
	return nil
}

// addFarmClientFlags are the flags of a command that reads or manages a
// shared farm as its coordinator (status, farm forget).
func addFarmClientFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.SetNormalizeFunc(natsAliases)
	f.String("nats", "", "a shared farm's address")
	f.String("nats-creds", "", "credentials for --nats: a file farm serve made (NKey seed) or a NATS credentials file; --creds says the same")
	f.String("nats-nkey", "", "file holding a NATS user NKey seed for --nats")
	f.String("nats-ca", "", "CA certificate of the farm server")
}

// farmClient connects to the farm --nats names; closeFarm ends the
// connection.
func (a *app) farmClient(ctx context.Context, name string) (js jetstream.JetStream, closeFarm func(), err error) {
	nc, err := farm.Dial(ctx, farm.ClientConfig{URL: a.v.GetString("nats"), Creds: a.v.GetString("nats-creds"),
		NkeySeed: a.v.GetString("nats-nkey"), CAFile: a.v.GetString("nats-ca"), Name: name})
	if err != nil {
		return nil, nil, err
	}
	if js, err = farm.JetStream(nc); err != nil {
		nc.Close()
		return nil, nil, err
	}
	return js, nc.Close, nil
}

// farmRunName is the run --run names, or the run of the folder args
// names (its farm.json), or none.
func (a *app) farmRunName(args []string) (string, error) {
	if name := a.v.GetString("run"); name != "" || len(args) == 0 {
		return name, nil
	}
	return pipeline.FarmRunName(args[0])
}
