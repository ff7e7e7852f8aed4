/* Reading the pieces of run files in the usual layout, for evaluation/trec/native.py.
 *
 * qs_scan_run reads a piece of a run file (whole lines) in one pass and hands back its
 * columns as Arrow arrays (the C data interface, which polars imports without a copy): qid,
 * docno and tag as Utf8View, rank as Int64, score as Float64. It accepts only lines of exactly
 * six fields of printable ASCII separated by single spaces, ending in "\n" (the last line may
 * end the piece), the first field not starting with '#', the rank an integer of at most 18
 * digits, the score in the score grammar (evaluation.trec.grammar.SCORE_PATTERN) with a
 * finite value. For anything else (a blank line, a comment, a tab, CR, extra fields, UTF-8,
 * a line longer than max_line) it declines and the caller reads the piece another way, so
 * what it accepts it reads as trec_eval and the rest of the reader do.
 *
 * Scores are converted exactly: with at most 2^53 as the decimal digits' integer and a power
 * of ten of at most 22 (both exact doubles), one multiplication or division rounds once, to
 * the nearest double; otherwise strtod_l in the C locale, which glibc rounds correctly too.
 * No Python here: it is loaded with ctypes, which lets go of the interpreter lock meanwhile.
 */
#define _GNU_SOURCE
#include <locale.h>
#ifdef __APPLE__
#include <xlocale.h>
#endif
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define QS_VERSION 1

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

/* The columns, in this order, in the arrays and the mask. */
enum { QID, DOCNO, RANK, SCORE, TAG, N_COLUMNS };

int qs_version(void) { return QS_VERSION; }

static void release_schema(struct ArrowSchema *schema) { schema->release = NULL; }

static void release_array(struct ArrowArray *array) {
    for (int64_t i = 0; i < array->n_buffers; i++)
        free((void *)array->buffers[i]);
    free(array->buffers);
    array->release = NULL;
}

/* A Utf8View column being built: 16-byte views, strings over 12 bytes in one data buffer. */
struct Views {
    uint8_t *views;
    uint8_t *data;
    int64_t data_length, data_capacity;
};

static int put_view(struct Views *column, int64_t row, const uint8_t *text, int64_t length) {
    uint8_t *view = column->views + 16 * row;
    int32_t length32 = (int32_t)length;
    memset(view, 0, 16);
    memcpy(view, &length32, 4);
    if (length <= 12) {
        memcpy(view + 4, text, (size_t)length);
        return 0;
    }
    if (column->data_length + length > column->data_capacity) {
        int64_t capacity = column->data_capacity ? 2 * column->data_capacity : 1 << 16;
        while (capacity < column->data_length + length)
            capacity *= 2;
        if (capacity > INT32_MAX)
            return -1; /* views hold 32-bit offsets */
        uint8_t *data = realloc(column->data, (size_t)capacity);
        if (data == NULL)
            return -1;
        column->data = data;
        column->data_capacity = capacity;
    }
    int32_t buffer = 0, offset = (int32_t)column->data_length;
    memcpy(view + 4, text, 4);
    memcpy(view + 8, &buffer, 4);
    memcpy(view + 12, &offset, 4);
    memcpy(column->data + column->data_length, text, (size_t)length);
    column->data_length += length;
    return 0;
}

static void export_schema(struct ArrowSchema *schema, const char *format) {
    memset(schema, 0, sizeof *schema);
    schema->format = format;
    schema->name = "";
    schema->flags = 2; /* nullable, though nothing is null */
    schema->release = release_schema;
}

/* Takes the buffers (NULL ones stay NULL); on failure frees them. */
static int export_array(struct ArrowArray *array, int64_t length, int64_t n_buffers,
                        void **buffers) {
    memset(array, 0, sizeof *array);
    const void **owned = calloc((size_t)n_buffers, sizeof(void *));
    if (owned == NULL) {
        for (int64_t i = 0; i < n_buffers; i++)
            free(buffers[i]);
        return -1;
    }
    for (int64_t i = 0; i < n_buffers; i++)
        owned[i] = buffers[i];
    array->length = length;
    array->n_buffers = n_buffers;
    array->buffers = owned;
    array->release = release_array;
    return 0;
}

static int export_views(struct Views *column, int64_t length, struct ArrowArray *array,
                        struct ArrowSchema *schema) {
    int64_t *sizes = malloc(sizeof(int64_t));
    uint8_t *data = column->data != NULL ? column->data : malloc(1);
    column->data = NULL;
    if (sizes == NULL || data == NULL) {
        free(sizes);
        free(data);
        return -1;
    }
    sizes[0] = column->data_length;
    void *buffers[4] = {NULL, column->views, data, sizes};
    column->views = NULL;
    export_schema(schema, "vu");
    return export_array(array, length, 4, buffers);
}

static const double POWERS_OF_TEN[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static locale_t c_locale;

/* The score grammar, [+-]?(D+(.D*)?|.D+)([eE][+-]?D+)?, and the nearest double; 0 when the
 * field is not in it or the value is not finite. */
static int parse_score(const uint8_t *field, const uint8_t *end, double *value) {
    const uint8_t *c = field;
    int negative = 0;
    if (*c == '+' || *c == '-')
        negative = *c++ == '-';
    /* value = mantissa * 10^power, while the significant digits fit in 19 */
    uint64_t mantissa = 0;
    int digits = 0, significant = 0, power = 0;
    for (; c < end && *c >= '0' && *c <= '9'; c++, digits++) {
        significant += mantissa != 0 || *c != '0';
        mantissa = 10 * mantissa + (uint64_t)(*c - '0');
    }
    if (c < end && *c == '.') {
        for (c++; c < end && *c >= '0' && *c <= '9'; c++, digits++, power--) {
            significant += mantissa != 0 || *c != '0';
            mantissa = 10 * mantissa + (uint64_t)(*c - '0');
        }
    }
    if (digits == 0)
        return 0;
    int exponent = 0;
    if (c < end && (*c == 'e' || *c == 'E')) {
        c++;
        int exponent_negative = 0;
        if (c < end && (*c == '+' || *c == '-'))
            exponent_negative = *c++ == '-';
        if (c == end || *c < '0' || *c > '9')
            return 0;
        for (; c < end && *c >= '0' && *c <= '9'; c++)
            if (exponent < 100000)
                exponent = 10 * exponent + (*c - '0');
        if (exponent_negative)
            exponent = -exponent;
    }
    if (c != end)
        return 0;
    power += exponent;
    double result;
    if (significant <= 19 && mantissa <= (UINT64_C(1) << 53) && power >= -22 && power <= 22) {
        /* Both exact doubles: one operation, rounded once to the nearest. */
        result = (double)mantissa;
        result = power < 0 ? result / POWERS_OF_TEN[-power] : result * POWERS_OF_TEN[power];
        if (negative)
            result = -result;
    } else {
        char text[128];
        if (end - field >= (int64_t)sizeof text)
            return 0;
        memcpy(text, field, (size_t)(end - field));
        text[end - field] = '\0';
        result = strtod_l(text, NULL, c_locale);
    }
    if (!isfinite(result))
        return 0;
    *value = result;
    return 1;
}

/* An integer of at most 18 digits, [+-]?D{1,18}; 0 otherwise. */
static int parse_rank(const uint8_t *field, const uint8_t *end, int64_t *value) {
    const uint8_t *c = field;
    int negative = 0;
    if (*c == '+' || *c == '-')
        negative = *c++ == '-';
    if (c == end || end - c > 18)
        return 0;
    int64_t result = 0;
    for (; c < end; c++) {
        if (*c < '0' || *c > '9')
            return 0;
        result = 10 * result + (*c - '0');
    }
    *value = negative ? -result : result;
    return 1;
}

/* The piece's lines: returns how many (and fills the arrays and schemas of the columns asked
 * for in ``mask``, bit i for column i), or -1 to decline (nothing is left allocated). A tag
 * that is the same on every line is not made a column: *tag_start and *tag_length give it
 * (within the piece), and the TAG array is left empty (release NULL). */
int64_t qs_scan_run(const uint8_t *piece, int64_t length, int64_t max_line, int mask,
                    struct ArrowArray *arrays, struct ArrowSchema *schemas, int64_t *tag_start,
                    int64_t *tag_length) {
    if (length == 0)
        return -1;
    int64_t capacity = 1; /* lines: one per newline, and one more if the last has none */
    for (const uint8_t *c = piece; (c = memchr(c, '\n', (size_t)(piece + length - c))) != NULL;
         c++)
        capacity++;
    if (c_locale == (locale_t)0) {
        locale_t made = newlocale(LC_ALL_MASK, "C", (locale_t)0);
        if (made == (locale_t)0)
            return -1;
        if (!__atomic_compare_exchange_n(&c_locale, &(locale_t){0}, made, 0, __ATOMIC_SEQ_CST,
                                         __ATOMIC_SEQ_CST))
            freelocale(made);
    }
    struct Views qids = {0}, docnos = {0}, tags = {0};
    int64_t *ranks = NULL;
    double *scores = NULL;
    int failed = 0;
    if (mask & (1 << QID))
        failed |= (qids.views = malloc((size_t)(16 * capacity))) == NULL;
    if (mask & (1 << DOCNO))
        failed |= (docnos.views = malloc((size_t)(16 * capacity))) == NULL;
    if (mask & (1 << RANK))
        failed |= (ranks = malloc((size_t)(8 * capacity))) == NULL;
    if (mask & (1 << SCORE))
        failed |= (scores = malloc((size_t)(8 * capacity))) == NULL;
    const uint8_t *first_tag = NULL;
    int64_t first_tag_length = 0;
    const uint8_t *p = piece, *end = piece + length;
    int64_t rows = 0;
    while (!failed && p < end) {
        if (rows == capacity) {
            failed = 1;
            break;
        }
        const uint8_t *line = p, *starts[6], *ends[6];
        int fields = 0;
        for (;;) {
            const uint8_t *start = p;
            while (p < end && *p > ' ' && *p < 0x7f)
                p++;
            if (p == start)
                break; /* an empty field: runs of spaces, a blank line, another byte */
            starts[fields] = start;
            ends[fields] = p;
            if (++fields == 6 || p == end || *p != ' ')
                break;
            p++;
        }
        /* Six fields, then the line's end; not a comment. */
        if (fields != 6 || (p < end && *p != '\n') || *starts[0] == '#') {
            failed = 1;
            break;
        }
        if (p < end)
            p++; /* the newline */
        if (p - line > max_line) {
            failed = 1;
            break;
        }
        int64_t rank;
        double score;
        if (!parse_rank(starts[3], ends[3], &rank) || !parse_score(starts[4], ends[4], &score)) {
            failed = 1;
            break;
        }
        if (ranks != NULL)
            ranks[rows] = rank;
        if (scores != NULL)
            scores[rows] = score;
        if (qids.views != NULL)
            failed |= put_view(&qids, rows, starts[0], ends[0] - starts[0]);
        if (docnos.views != NULL)
            failed |= put_view(&docnos, rows, starts[2], ends[2] - starts[2]);
        if (mask & (1 << TAG)) {
            int64_t tag_length_here = ends[5] - starts[5];
            if (first_tag == NULL) {
                first_tag = starts[5];
                first_tag_length = tag_length_here;
            } else if (tags.views == NULL &&
                       (tag_length_here != first_tag_length ||
                        memcmp(starts[5], first_tag, (size_t)first_tag_length) != 0)) {
                /* Not the same throughout: a column after all, the earlier rows first. */
                failed |= (tags.views = malloc((size_t)(16 * capacity))) == NULL;
                for (int64_t row = 0; !failed && row < rows; row++)
                    failed |= put_view(&tags, row, first_tag, first_tag_length);
            }
            if (!failed && tags.views != NULL)
                failed |= put_view(&tags, rows, starts[5], tag_length_here);
        }
        rows++;
    }
    for (int column = 0; column < N_COLUMNS; column++)
        arrays[column].release = NULL;
    if (!failed && qids.views != NULL)
        failed |= export_views(&qids, rows, &arrays[QID], &schemas[QID]);
    if (!failed && docnos.views != NULL)
        failed |= export_views(&docnos, rows, &arrays[DOCNO], &schemas[DOCNO]);
    if (!failed && tags.views != NULL)
        failed |= export_views(&tags, rows, &arrays[TAG], &schemas[TAG]);
    if (!failed && ranks != NULL) {
        void *buffers[2] = {NULL, ranks};
        ranks = NULL;
        export_schema(&schemas[RANK], "l");
        failed |= export_array(&arrays[RANK], rows, 2, buffers);
    }
    if (!failed && scores != NULL) {
        void *buffers[2] = {NULL, scores};
        scores = NULL;
        export_schema(&schemas[SCORE], "g");
        failed |= export_array(&arrays[SCORE], rows, 2, buffers);
    }
    free(qids.views);
    free(qids.data);
    free(docnos.views);
    free(docnos.data);
    free(tags.views);
    free(tags.data);
    free(ranks);
    free(scores);
    if (failed) {
        for (int column = 0; column < N_COLUMNS; column++)
            if (arrays[column].release != NULL)
                arrays[column].release(&arrays[column]);
        return -1;
    }
    *tag_start = first_tag != NULL ? first_tag - piece : 0;
    *tag_length = first_tag_length;
    return rows;
}

/* Releases what the importer did not take (it leaves release NULL in what it took). */
void qs_release(struct ArrowArray *arrays, int count) {
    for (int i = 0; i < count; i++)
        if (arrays[i].release != NULL)
            arrays[i].release(&arrays[i]);
}
