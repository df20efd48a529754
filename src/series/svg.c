/* svg.c -- a self-contained SVG line chart of one metric over a series. */
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
			PB + 20, i);
	}
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n", PL, PB, PR, PB);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">iteration</text>\n", (PL + PR) / 2,
		H - 12);
}

struct pen {
	const struct jma_series *ser;
	const struct axes *ax;
	enum jma_metric m;
	int n;			/* lines drawn so far: the legend row */
};

static void draw_line(FILE *f, struct pen *p, const struct line *l, const char *color, int width)
{
	const struct axes *ax = p->ax;
	double ly = PT + 10 + p->n++ * 22;
	int down = 0;
	uint64_t v = 0;
	char peak[32];

	fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"%d\" d=\"", color, width);
	for (unsigned i = ax->from; i <= ax->to; i++) {
		/* Lift the pen where the arena did not exist. */
		if (jma_sample_metric(&p->ser->v[i], l->arena, p->m, &v)) {
			down = 0;
			continue;
		}
		fprintf(f, "%c%.1f %.1f ", down ? 'L' : 'M', px(ax, i), py(ax, v));
		down = 1;
	}
	fputs("\"/>\n", f);
	/* A single iteration has no segment to show: mark the points. */
	if (ax->from == ax->to && down)
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", px(ax, ax->from),
			py(ax, v), color);
	jma_format_size((int64_t)l->peak, peak, sizeof(peak));
	fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
		"stroke-width=\"%d\"/>\n", PR + 15, ly - 4, PR + 40, ly - 4, color, width);
	if (l->arena == JMA_ARENA_ALL)
		fprintf(f, "<text x=\"%d\" y=\"%.1f\">all, peak %s</text>\n", PR + 46, ly, peak);
	else
		fprintf(f, "<text x=\"%d\" y=\"%.1f\">arena %d, peak %s</text>\n", PR + 46, ly,
			l->arena, peak);
}

static void subtitle(FILE *f, const struct jma_series *ser, unsigned from, unsigned to)
{
	char a[32] = "", b[32] = "";
	time_t t0 = (time_t)ser->v[from].time, t1 = (time_t)ser->v[to].time;
	struct tm tm;

	if (t0 > 0 && t1 > 0) {
		strftime(a, sizeof(a), "%Y-%m-%d %H:%M:%S", localtime_r(&t0, &tm));
		strftime(b, sizeof(b), "%H:%M:%S", localtime_r(&t1, &tm));
	}
	fprintf(f, "<text x=\"%d\" y=\"44\" fill=\"#555\">%u samples, iterations %u-%u%s%s%s%s</text>\n",
		PL, to - from + 1, from, to, a[0] ? ", " : "", a, a[0] ? " to " : "", b);
}

int jma_report_svg(FILE *f, const struct jma_series *ser, enum jma_metric m, unsigned from,
		   unsigned to, const char *title)
{
	struct axes ax = { 0 };
	struct pen p = { .ser = ser, .ax = &ax, .m = m };
	struct line all = { .arena = JMA_ARENA_ALL }, *lines;
	int *arenas, err = report_range(ser, &from, &to);
	size_t na, nl = 0;
	uint64_t top;
	unsigned at;

	if (err || (err = report_arenas(ser, from, to, &arenas, &na)))
		return err;
	lines = calloc(na, sizeof(*lines));
	if (!lines) {
		free(arenas);
		return -ENOMEM;
	}
	report_peak(ser, JMA_ARENA_ALL, m, from, to, &all.peak, &at);
	for (size_t a = 1; a < na; a++) {
		lines[nl].arena = arenas[a];
		if (report_peak(ser, arenas[a], m, from, to, &lines[nl].peak, &at) == 0 &&
		    lines[nl].peak > 0)
			nl++;
	}
	free(arenas);
	qsort(lines, nl, sizeof(*lines), cmp_line);
	if (nl > TOP_ARENAS)
		nl = TOP_ARENAS;
	top = all.peak;
	for (size_t i = 0; i < nl; i++)
		top = lines[i].peak > top ? lines[i].peak : top;
	ax.from = from;
	ax.to = to;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", W, H, W, H, PL);
	xml_text(f, title);
	fputs("</text>\n", f);
	subtitle(f, ser, from, to);
	draw_axes(f, &ax, top);
	draw_line(f, &p, &all, "#000", 3);
	for (size_t i = 0; i < nl; i++)
		draw_line(f, &p, &lines[i], palette[i], 2);
	fputs("</svg>\n", f);
	free(lines);
	return ferror(f) ? -EIO : 0;
}
