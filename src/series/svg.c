/* svg.c -- a self-contained SVG line chart of byte values: any chart, and one
 * metric of a stats series per arena. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "series/report.h"

#define TOP_ARENAS 8
#define W 960
#define H 480
#define PL 90			/* plot area: left, right, top, bottom */
#define PR (W - 210)
#define PT 60
#define PB (H - 55)

static const char *const palette[TOP_ARENAS] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
};

struct line {
	int arena;
	uint64_t peak;
};

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->peak != y->peak)
		return x->peak < y->peak ? 1 : -1;
	return (x->arena > y->arena) - (x->arena < y->arena);
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 0x20)
				fputc(*s, f);
		}
	}
}

/* A round step (1, 2 or 5 times a power of ten) so that about @want steps
 * cover @span > 0.  (Plain arithmetic: the library does not need libm.) */
static double nice_step(double span, int want)
{
	double raw = span / want, mag = 1;

	while (mag * 10 <= raw)
		mag *= 10;
	while (mag > raw)
		mag /= 10;

	for (int i = 0; i < 3; i++) {
		static const double k[] = { 1, 2, 5 };
		if (k[i] * mag >= raw)
			return k[i] * mag;
	}
	return 10 * mag;
}

struct axes {
	unsigned from, to;
	double unit, ymax;	/* bytes per axis unit; the top of the axis in units */
	const char *uname;
	const char *xlabel;
	unsigned xstep;
};

static double px(const struct axes *ax, unsigned i)
{
	if (ax->to == ax->from)
		return (PL + PR) / 2.0;
	return PL + (double)(i - ax->from) * (PR - PL) / (double)(ax->to - ax->from);
}

static double py(const struct axes *ax, uint64_t v)
{
	return PB - (double)v / ax->unit / ax->ymax * (PB - PT);
}

static void draw_axes(FILE *f, struct axes *ax, uint64_t top)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double step;
	int u = 0, xs;

	ax->unit = 1;
	while (u < 5 && (double)top >= ax->unit * 1024) {
		ax->unit *= 1024;
		u++;
	}
	ax->uname = names[u];
	ax->ymax = (double)top / ax->unit;
	if (ax->ymax <= 0)
		ax->ymax = 1;
	step = nice_step(ax->ymax, 5);
	ax->ymax = (double)(long long)(ax->ymax / step + 1 - 1e-9) * step;
	for (double y = 0; y <= ax->ymax + step / 2; y += step) {
		double yy = PB - y / ax->ymax * (PB - PT);
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", PL, yy,
			PR, yy);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g %s</text>\n", PL - 6,
			yy + 4, y, ax->uname);
	}
	xs = ax->to > ax->from ? (int)(nice_step(ax->to - ax->from, 10) + 1 - 1e-9) : 1;
	for (unsigned i = ax->from; i <= ax->to; i += (unsigned)xs) {
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#888\"/>\n",
			px(ax, i), PB, px(ax, i), PB + 5);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%u</text>\n", px(ax, i),
			PB + 20, i * (ax->xstep ? ax->xstep : 1));
	}
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n", PL, PB, PR, PB);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (PL + PR) / 2, H - 12);
	xml_text(f, ax->xlabel);
	fputs("</text>\n", f);
}

static void draw_line(FILE *f, const struct chart *c, const struct axes *ax, size_t l)
{
	const struct chart_line *cl = &c->lines[l];
	double ly = PT + 10 + (double)l * 22;
	int down = 0;
	uint64_t v = 0;

	fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"%d\" d=\"", cl->color,
		cl->width);
	for (unsigned i = ax->from; i <= ax->to; i++) {
		/* Lift the pen where the line has no value. */
		if (c->value(c->arg, l, i, &v)) {
			down = 0;
			continue;
		}
		fprintf(f, "%c%.1f %.1f ", down ? 'L' : 'M', px(ax, i), py(ax, v));
		down = 1;
	}
	fputs("\"/>\n", f);
	/* A single point has no segment to show: mark it. */
	if (ax->from == ax->to && down)
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", px(ax, ax->from),
			py(ax, v), cl->color);
	fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
		"stroke-width=\"%d\"/>\n", PR + 15, ly - 4, PR + 40, ly - 4, cl->color, cl->width);
	fprintf(f, "<text x=\"%d\" y=\"%.1f\">", PR + 46, ly);
	xml_text(f, cl->label);
	fputs("</text>\n", f);
}

const char *chart_color(size_t i)
{
	return palette[i % TOP_ARENAS];
}

int chart_svg(FILE *f, const struct chart *c)
{
	struct axes ax = { .from = c->from, .to = c->to, .xlabel = c->xlabel, .xstep = c->xstep };

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", W, H, W, H, PL);
	xml_text(f, c->title);
	fputs("</text>\n", f);
	fprintf(f, "<text x=\"%d\" y=\"44\" fill=\"#555\">", PL);
	xml_text(f, c->subtitle);
	fputs("</text>\n", f);
	draw_axes(f, &ax, c->top);
	for (size_t l = 0; l < c->nlines; l++)
		draw_line(f, c, &ax, l);
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}

static void subtitle(const struct jma_series *ser, unsigned from, unsigned to, char *buf,
		     size_t len)
{
	char a[32] = "", b[32] = "";
	time_t t0 = (time_t)ser->v[from].time, t1 = (time_t)ser->v[to].time;
	struct tm tm;

	if (t0 > 0 && t1 > 0) {
		strftime(a, sizeof(a), "%Y-%m-%d %H:%M:%S", localtime_r(&t0, &tm));
		strftime(b, sizeof(b), "%H:%M:%S", localtime_r(&t1, &tm));
	}
	snprintf(buf, len, "%u samples, iterations %u-%u%s%s%s%s", to - from + 1, from, to,
		 a[0] ? ", " : "", a, a[0] ? " to " : "", b);
}

struct arena_chart {
	const struct jma_series *ser;
	enum jma_metric m;
	const struct line *lines;	/* "all" first */
};

static int arena_value(const void *arg, size_t l, unsigned i, uint64_t *v)
{
	const struct arena_chart *a = arg;

	return jma_sample_metric(&a->ser->v[i], a->lines[l].arena, a->m, v);
}

int jma_report_svg(FILE *f, const struct jma_series *ser, enum jma_metric m, unsigned from,
		   unsigned to, const char *title)
{
	struct line *lines;
	struct chart_line cl[TOP_ARENAS + 1];
	char labels[TOP_ARENAS + 1][64], sub[160];
	struct arena_chart ac = { .ser = ser, .m = m };
	struct chart c = { .title = title, .subtitle = sub, .xlabel = "iteration", .lines = cl,
			   .value = arena_value, .arg = &ac };
	int *arenas, err = report_range(ser, &from, &to);
	size_t na, nl = 1;
	unsigned at;

	if (err || (err = report_arenas(ser, from, to, &arenas, &na)))
		return err;
	lines = calloc(na + 1, sizeof(*lines));
	if (!lines) {
		free(arenas);
		return -ENOMEM;
	}
	lines[0].arena = JMA_ARENA_ALL;
	report_peak(ser, JMA_ARENA_ALL, m, from, to, &lines[0].peak, &at);
	for (size_t a = 1; a < na; a++) {
		lines[nl].arena = arenas[a];
		if (report_peak(ser, arenas[a], m, from, to, &lines[nl].peak, &at) == 0 &&
		    lines[nl].peak > 0)
			nl++;
	}
	free(arenas);
	qsort(lines + 1, nl - 1, sizeof(*lines), cmp_line);
	if (nl > TOP_ARENAS + 1)
		nl = TOP_ARENAS + 1;
	for (size_t i = 0; i < nl; i++) {
		char peak[32];

		jma_format_size((int64_t)lines[i].peak, peak, sizeof(peak));
		if (i == 0)
			snprintf(labels[i], sizeof(labels[i]), "all, peak %s", peak);
		else
			snprintf(labels[i], sizeof(labels[i]), "arena %d, peak %s", lines[i].arena, peak);
		cl[i] = (struct chart_line){ labels[i], i ? palette[i - 1] : "#000", i ? 2 : 3 };
		c.top = lines[i].peak > c.top ? lines[i].peak : c.top;
	}
	subtitle(ser, from, to, sub, sizeof(sub));
	ac.lines = lines;
	c.from = from;
	c.to = to;
	c.nlines = nl;
	err = chart_svg(f, &c);
	free(lines);
	return err;
}
