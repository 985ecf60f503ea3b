/* Prints libmal's settings table (src/engine/core/settings.c): --markdown the settings
 * reference, --fields the mal_config_t members it covers, --env the environment variables
 * it reads. check_settings.cmake compares them with docs/guide/library.md, include/mal.h and the
 * getenv calls of src/. */
#include "settings.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "--markdown";
    if (strcmp(what, "--markdown") == 0) {
        settings_markdown(stdout);
        return 0;
    }
    bool fields = strcmp(what, "--fields") == 0;
    if (!fields && strcmp(what, "--env") != 0) {
        fprintf(stderr, "usage: %s [--markdown|--fields|--env]\n", argv[0]);
        return 2;
    }
    for (int id = 0; id < SETTING_COUNT_; id++) {
        const setting_t *s = setting_row((setting_id_t)id);
        const char *name = fields ? s->field : s->env;
        if (name != NULL)
            printf("%s\n", name);
    }
    return 0;
}
