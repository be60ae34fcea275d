package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"dialogfarm/farm"
)

func farmForgetCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "forget RUN_FOLDER",
		Short: "Take a stopped run off a shared farm: its jobs (no worker drives them any more) and the outcomes it has not collected",
		Long: `farm forget takes a run off a shared farm: the jobs of it that wait, so
that no worker drives them any more, the results and dead letters it has
not collected, and its collector's state. A run stopped and not to be
resumed would otherwise keep the workers busy with its jobs, and its
outcomes on the farm for 30 days (status --nats lists the runs the farm
holds). A dialogue in progress finishes on its worker. The run folder
keeps its records: dialogfarm run in it again enqueues what it has not
recorded. RUN_FOLDER names the run by its farm.json (or --run by its
name). farm forget refuses while the run goes on (its collector pulls its
outcomes): stop it first, or give --force.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.farmForget(cmd.Context(), args) },
	}
	addFarmClientFlags(cmd)
	cmd.Flags().String("run", "", "the run's name on the farm (instead of RUN_FOLDER)")
	cmd.Flags().Bool("force", false, "forget the run even while a collector pulls its outcomes")
	return cmd
}

func (a *app) farmForget(ctx context.Context, args []string) error {
	if a.v.GetString("nats") == "" {
		return errors.New("farm forget: --nats is required (the farm to take the run off)")
	}
	name, err := a.farmRunName(args)
	if err != nil {
		return err
	}
	if name == "" {
		return errors.New("farm forget: name the run: its folder (RUN_FOLDER) or --run NAME")
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	js, closeFarm, err := a.farmClient(cctx, "dialogfarm-forget")
	if err != nil {
		return err
	}
	defer closeFarm()
	q, err := farm.Open(cctx, js)
	if err != nil {
		return err
	}
	f, err := q.Forget(cctx, name, a.v.GetBool("force"), a.log)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "farm: took run %s off the farm: %d jobs no worker will drive, %d outcomes it had not collected; its folder keeps its records (dialogfarm run there again goes on)\n",
		name, f.Jobs, f.Outcomes)
	return nil
}
