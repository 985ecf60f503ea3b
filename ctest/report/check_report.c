/* Checks JSON-lines reports (MAL_REPORT) against the schema in docs/report.md:
 *
 *   check_report SCHEMA.md REPORT.jsonl... [--require kind,kind...]
 *   check_report SCHEMA.md --self-test
 *
 * The schema is read from the Markdown tables of docs/report.md: "## Every record" lists
 * the fields of every record, "## Kind `NAME`" those of one kind; a row is
 * "| `field` | type | required | meaning |" with type integer, number, string or
 * boolean and required "yes" or a condition (optional). Every line must be one flat JSON
 * object with "schema" equal to REPORT_SCHEMA and a known "kind", holding every required
 * field, no field the schema does not list, and values of the listed types. --require
 * also demands at least one record of each named kind. --self-test feeds the checker
 * lines that must pass and lines that must fail, so a checker that accepts anything
 * fails the test. Pure C, no MPI. */
#include "report.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KINDS 16
#define MAX_FIELDS 48
#define NAME_MAX_ 48

typedef enum { T_INTEGER, T_NUMBER, T_STRING, T_BOOLEAN, T_NULL } type_t;

typedef struct {
    char name[NAME_MAX_];
    type_t type;
    bool required;
} field_t;

typedef struct {
    char name[NAME_MAX_];       /* "" for the fields of every record */
    field_t fields[MAX_FIELDS];
    int nfields;
    int seen;
} kind_t;

typedef struct {
    kind_t kinds[MAX_KINDS];    /* kinds[0]: every record */
    int nkinds;
} schema_t;

/* ---- the schema, from Markdown ------------------------------------------------------- */

static bool parse_type(const char *s, type_t *t)
{
    static const char *const names[] = {"integer", "number", "string", "boolean"};
    for (int k = 0; k < 4; k++)
        if (strcmp(s, names[k]) == 0) {
            *t = (type_t)k;
            return true;
        }
    return false;
}

/* The cell after `p` (which points at a '|'), trimmed, into `out`; the next '|'. */
static const char *cell(const char *p, char *out, size_t cap)
{
    p++;
    while (*p == ' ')
        p++;
    const char *end = strchr(p, '|');
    if (end == NULL)
        return NULL;
    size_t n = (size_t)(end - p);
    while (n > 0 && p[n - 1] == ' ')
        n--;
    snprintf(out, cap, "%.*s", (int)n, p);
    return end;
}

static int add_field(kind_t *k, const char *line)
{
    char name[NAME_MAX_ + 2], type[32], required[160];
    const char *p = cell(line, name, sizeof name);
    p = p ? cell(p, type, sizeof type) : NULL;
    p = p ? cell(p, required, sizeof required) : NULL;
    size_t n = strlen(name);
    if (p == NULL || n < 3 || name[0] != '`' || name[n - 1] != '`')
        return strcmp(name, "field") == 0 || name[0] == '-' ? 0 : -1; /* header, rule */
    field_t *f = &k->fields[k->nfields];
    if (k->nfields == MAX_FIELDS || !parse_type(type, &f->type))
        return -1;
    snprintf(f->name, sizeof f->name, "%.*s", (int)n - 2, name + 1);
    f->required = strcmp(required, "yes") == 0;
    k->nfields++;
    return 0;
}

static int read_schema(const char *path, schema_t *s)
{
    FILE *in = fopen(path, "r");
    if (in == NULL) {
        perror(path);
        return -1;
    }
    char line[1024];
    kind_t *cur = NULL;
    int rc = 0, lineno = 0;
    memset(s, 0, sizeof *s);
    s->nkinds = 1;
    while (rc == 0 && fgets(line, sizeof line, in) != NULL) {
        lineno++;
        char name[NAME_MAX_];
        if (strncmp(line, "## ", 3) == 0) {
            cur = NULL;
            if (strncmp(line, "## Every record", 15) == 0)
                cur = &s->kinds[0];
            else if (sscanf(line, "## Kind `%47[a-z_]`", name) == 1 && s->nkinds < MAX_KINDS) {
                cur = &s->kinds[s->nkinds++];
                snprintf(cur->name, sizeof cur->name, "%s", name);
            }
        } else if (cur != NULL && line[0] == '|' && add_field(cur, line) != 0) {
            fprintf(stderr, "%s:%d: a field row must read | `name` | type | required | "
                    "meaning |\n", path, lineno);
            rc = -1;
        }
    }
    fclose(in);
    if (rc == 0 && (s->kinds[0].nfields == 0 || s->nkinds < 2)) {
        fprintf(stderr, "%s: no \"## Every record\" table or no \"## Kind\" section\n", path);
        rc = -1;
    }
    return rc;
}

/* ---- one flat JSON object --------------------------------------------------------------- */

typedef struct {
    char key[NAME_MAX_];
    type_t type;
    char text[NAME_MAX_];   /* strings: the start of the value (kinds); numbers: text */
} value_t;

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    return p;
}

/* A JSON string at p (after its opening quote) into out (cut short if long); the
 * character after the closing quote, or NULL. */
static const char *json_string(const char *p, char *out, size_t cap)
{
    size_t n = 0;
    for (; *p != '"'; p++) {
        if (*p == '\0' || (unsigned char)*p < 0x20)
            return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int k = 1; k <= 4; k++)
                    if (!isxdigit((unsigned char)p[k]))
                        return NULL;
                p += 4;
            } else if (strchr("\"\\/bfnrt", *p) == NULL || *p == '\0') {
                return NULL;
            }
        }
        if (n + 1 < cap)
            out[n++] = *p;
    }
    out[n] = '\0';
    return p + 1;
}

/* A JSON number: integer when it has no fraction or exponent. */
static const char *json_number(const char *p, value_t *v)
{
    const char *start = p;
    bool whole = true;
    if (*p == '-')
        p++;
    if (!isdigit((unsigned char)*p))
        return NULL;
    if (*p == '0' && isdigit((unsigned char)p[1]))
        return NULL;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '.') {
        whole = false;
        if (!isdigit((unsigned char)*++p))
            return NULL;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        whole = false;
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return NULL;
        while (isdigit((unsigned char)*p))
            p++;
    }
    v->type = whole ? T_INTEGER : T_NUMBER;
    snprintf(v->text, sizeof v->text, "%.*s", (int)(p - start), start);
    return p;
}

static const char *json_value(const char *p, value_t *v)
{
    if (*p == '"') {
        v->type = T_STRING;
        return json_string(p + 1, v->text, sizeof v->text);
    }
    static const struct { const char *word; type_t type; } words[] = {
        {"true", T_BOOLEAN}, {"false", T_BOOLEAN}, {"null", T_NULL}};
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
        if (strncmp(p, words[k].word, strlen(words[k].word)) == 0) {
            v->type = words[k].type;
            return p + strlen(words[k].word);
        }
    return json_number(p, v);
}

/* The members of one object, at most `cap`; -1 when the text is not one flat object. */
static int parse_object(const char *p, value_t *vals, int cap)
{
    int n = 0;
    p = skip_ws(p);
    if (*p++ != '{')
        return -1;
    p = skip_ws(p);
    if (*p == '}')
        return *skip_ws(p + 1) == '\0' ? 0 : -1;
    for (;;) {
        if (n == cap || *p != '"')
            return -1;
        p = json_string(p + 1, vals[n].key, sizeof vals[n].key);
        if (p == NULL || *(p = skip_ws(p)) != ':')
            return -1;
        p = json_value(skip_ws(p + 1), &vals[n]);
        if (p == NULL)
            return -1;
        n++;
        p = skip_ws(p);
        if (*p == '}')
            return *skip_ws(p + 1) == '\0' ? n : -1;
        if (*p++ != ',')
            return -1;
        p = skip_ws(p);
    }
}

/* ---- checking a record -------------------------------------------------------------- */

static const field_t *find_field(const kind_t *k, const char *name)
{
    for (int i = 0; i < k->nfields; i++)
        if (strcmp(k->fields[i].name, name) == 0)
            return &k->fields[i];
    return NULL;
}

static const value_t *find_value(const value_t *vals, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(vals[i].key, key) == 0)
            return &vals[i];
    return NULL;
}

static bool type_fits(type_t want, type_t got)
{
    return want == got || (want == T_NUMBER && (got == T_INTEGER || got == T_NULL));
}

static bool has_required(const kind_t *k, const value_t *vals, int n, char *why, size_t cap)
{
    for (int i = 0; i < k->nfields; i++)
        if (k->fields[i].required && find_value(vals, n, k->fields[i].name) == NULL) {
            snprintf(why, cap, "required field \"%s\" missing", k->fields[i].name);
            return false;
        }
    return true;
}

/* Whether `line` is a valid record; `why` says what is wrong. */
static bool check_line(schema_t *s, const char *line, char *why, size_t cap)
{
    value_t vals[MAX_FIELDS * 2];
    int n = parse_object(line, vals, MAX_FIELDS * 2);
    if (n < 0) {
        snprintf(why, cap, "not one flat JSON object");
        return false;
    }
    const value_t *schema = find_value(vals, n, "schema");
    const value_t *kind = find_value(vals, n, "kind");
    if (!has_required(&s->kinds[0], vals, n, why, cap))
        return false;
    if (schema->type != T_INTEGER || atoi(schema->text) != REPORT_SCHEMA) {
        snprintf(why, cap, "schema is not %d", REPORT_SCHEMA);
        return false;
    }
    kind_t *k = NULL;
    for (int i = 1; i < s->nkinds && kind->type == T_STRING; i++)
        if (strcmp(s->kinds[i].name, kind->text) == 0)
            k = &s->kinds[i];
    if (k == NULL) {
        snprintf(why, cap, "unknown kind \"%s\"", kind->text);
        return false;
    }
    if (!has_required(k, vals, n, why, cap))
        return false;
    for (int i = 0; i < n; i++) {
        if (find_value(vals, i, vals[i].key) != NULL) {
            snprintf(why, cap, "field \"%.47s\" twice", vals[i].key);
            return false;
        }
        const field_t *f = find_field(k, vals[i].key);
        f = f != NULL ? f : find_field(&s->kinds[0], vals[i].key);
        if (f == NULL || !type_fits(f->type, vals[i].type)) {
            snprintf(why, cap, "field \"%.47s\" %s", vals[i].key,
                     f == NULL ? "is not in the schema" : "has the wrong type");
            return false;
        }
    }
    k->seen++;
    return true;
}

static int check_file(schema_t *s, const char *path)
{
    FILE *in = fopen(path, "r");
    if (in == NULL) {
        perror(path);
        return -1;
    }
    char line[16384], why[160];
    int bad = 0, lineno = 0;
    while (fgets(line, sizeof line, in) != NULL) {
        lineno++;
        if (!check_line(s, line, why, sizeof why)) {
            printf("check_report: FAIL %s:%d: %s: %s", path, lineno, why, line);
            bad++;
        }
    }
    fclose(in);
    printf("check_report: %s: %d records, %d bad\n", path, lineno, bad);
    return bad == 0 && lineno > 0 ? 0 : -1;
}

/* Every kind named in the comma-separated list was seen at least once. */
static int check_required_kinds(const schema_t *s, const char *list)
{
    int rc = 0;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *name = strtok(copy, ","); name != NULL; name = strtok(NULL, ",")) {
        int seen = -1;
        for (int i = 1; i < s->nkinds; i++)
            if (strcmp(s->kinds[i].name, name) == 0)
                seen = s->kinds[i].seen;
        if (seen <= 0) {
            printf("check_report: FAIL no record of kind \"%s\"%s\n", name,
                   seen < 0 ? " (not in the schema)" : "");
            rc = -1;
        }
    }
    return rc;
}

/* Lines the checker must accept, then lines it must refuse. */
static int self_test(schema_t *s)
{
    static const char *const good[] = {
        "{\"schema\":1,\"kind\":\"parked\",\"initial\":true,\"wall_s\":0.5,\"cpu_s\":0}",
        "{\"schema\":1,\"kind\":\"decision\",\"iteration\":10,\"action\":\"none\","
        "\"procs_before\":2,\"procs_after\":2,\"goal_s\":0.000000,\"current_s\":null,"
        "\"predicted_s\":1e-3,\"reason\":\"a \\\"quoted\\\" \\u00e9 reason\"}",
    };
    static const char *const bad[] = {
        "{\"kind\":\"parked\",\"initial\":true,\"wall_s\":0.5,\"cpu_s\":0}",   /* no schema */
        "{\"schema\":1,\"initial\":true,\"wall_s\":0.5,\"cpu_s\":0}",          /* no kind   */
        "{\"schema\":2,\"kind\":\"parked\",\"initial\":true,\"wall_s\":0.5,\"cpu_s\":0}",
        "{\"schema\":1,\"kind\":\"teleport\",\"initial\":true}",               /* unknown   */
        "{\"schema\":1,\"kind\":\"parked\",\"initial\":true,\"wall_s\":0.5}",   /* missing   */
        "{\"schema\":1,\"kind\":\"parked\",\"initial\":1,\"wall_s\":0.5,\"cpu_s\":0}",
        "{\"schema\":1,\"kind\":\"parked\",\"initial\":true,\"wall_s\":0.5,\"cpu_s\":0,"
        "\"extra\":1}",                                                           /* unlisted  */
        "{\"schema\":1,\"kind\":\"parked\",\"initial\":true,\"wall_s\":0.5,\"cpu_s\":0,"
        "\"cpu_s\":1}",                                                           /* twice     */
        "{\"schema\":1,\"kind\":\"parked\",\"initial\":true,\"wall_s\":nan,\"cpu_s\":0}",
        "{\"schema\":1,\"kind\":\"parked\",\"initial\":true,\"wall_s\":0.5,\"cpu_s\":0",
        "{\"schema\":1,\"kind\":\"parked\",\"initial\":true,\"wall_s\":0.5,\"cpu_s\":{}}",
        "",
    };
    char why[160];
    int failures = 0;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!check_line(s, good[i], why, sizeof why)) {
            printf("check_report: FAIL refused a valid line (%s): %s\n", why, good[i]);
            failures++;
        }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (check_line(s, bad[i], why, sizeof why)) {
            printf("check_report: FAIL accepted an invalid line: %s\n", bad[i]);
            failures++;
        }
    return failures == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    static schema_t schema;
    if (argc < 3) {
        fprintf(stderr, "usage: %s SCHEMA.md (--self-test | REPORT.jsonl... "
                "[--require kind,...])\n", argv[0]);
        return 2;
    }
    if (read_schema(argv[1], &schema) != 0)
        return 1;
    int rc = 0, files = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--self-test") == 0) {
            rc |= self_test(&schema);
        } else if (strcmp(argv[i], "--require") == 0 && i + 1 < argc) {
            rc |= check_required_kinds(&schema, argv[++i]);
        } else {
            rc |= check_file(&schema, argv[i]);
            files++;
        }
    }
    printf("check_report: %s (%d kinds in the schema, %d report files)\n",
           rc == 0 ? "PASS" : "FAIL", schema.nkinds - 1, files);
    return rc == 0 ? 0 : 1;
}
