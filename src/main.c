/* tabletrack: wiring only. Configuration in, pipeline run, exit code out. */
#include <stdio.h>

#include "capture/capture.h"
#include "config/config.h"
#include "core/err.h"
#include "core/log.h"
#include "pipeline/pipeline.h"
#include "pipeline/service.h"

int main(int argc, char **argv)
{
	struct tt_config cfg;
	config_defaults(&cfg);
	int rc = config_parse_args(&cfg, argc, argv);
	if (rc == 1)
		return 0;
	if (rc < 0)
		return CONFIG_EX_CONFIG;
	if (cfg.verbose)
		log_set_level(LOG_DEBUG);
	else if (cfg.quiet)
		log_set_level(LOG_WARN);
	if (cfg.list_cameras)
		return capture_list_cameras(stdout) == 0 ? 0 : 1;

	service_install_signals();
	int err = 0;
	struct pipeline *p = pipeline_create(&cfg, argc, argv, &err);
	if (!p)
		return err == ERR_CONFIG ? CONFIG_EX_CONFIG : 1;
	rc = pipeline_run(p);
	pipeline_destroy(p);
	return rc;
}
