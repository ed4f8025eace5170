package io.jsdp.bench.cli;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;

/**
 * PNG charts with Java2D, headless, no dependency: the main figure of a scenario per series against
 * size (log scale) or, with one size, as bars.
 */
final class Plot {
    private static final int W = 820;
    private static final int H = 480;
    private static final int LEFT = 80;
    private static final int RIGHT = 190;
    private static final int TOP = 40;
    private static final int BOTTOM = 60;
    private static final Color[] COLORS = {
        new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c), new Color(0xd62728),
        new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f)};

    private Plot() {
    }

    /**
     * Draws {@code scenario}'s main figure into {@code dir/<scenario>.png}.
     *
     * @return the file name, or null when there is nothing to draw
     */
    static String write(Path dir, String scenario, List<Result> rs) throws IOException {
        System.setProperty("java.awt.headless", "true");
        String metric = Report.mainMetric(scenario);
        List<String> series = Report.series(rs, scenario);
        List<Long> sizes = Report.sizes(rs, scenario);
        if (series.isEmpty() || sizes.isEmpty()) {
            return null;
        }
        BufferedImage img = new BufferedImage(W, H, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, W, H);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            double max = 0;
            double min = Double.MAX_VALUE;
            for (String s : series) {
                for (long size : sizes) {
                    double v = Report.value(rs, scenario, s, size, metric);
                    if (!Double.isNaN(v) && v > 0) {
                        max = Math.max(max, v);
                        min = Math.min(min, v);
                    }
                }
            }
            if (max == 0) {
                return null;
            }
            boolean logY = max / min > 50;
            double yLo = logY ? Math.pow(10, Math.floor(Math.log10(min))) : 0;
            double yHi = logY ? Math.pow(10, Math.ceil(Math.log10(max))) : max * 1.1;
            int pw = W - LEFT - RIGHT;
            int ph = H - TOP - BOTTOM;
            g.setColor(Color.BLACK);
            g.drawString(scenario + ": " + metric + (Report.lowerIsBetter(metric) ? " (lower is better)" : " (higher is better)")
                + (logY ? ", log scale" : ""), LEFT, TOP - 15);
            g.drawRect(LEFT, TOP, pw, ph);
            // y ticks
            // log: one tick per decade; linear: five steps
            int ticks = logY ? (int) Math.round(Math.log10(yHi / yLo)) : 5;
            for (int i = 0; i <= ticks; i++) {
                double v = logY ? yLo * Math.pow(10, i) : yLo + (yHi - yLo) * i / ticks;
                int y = TOP + ph - (int) Math.round(ph * i / (double) ticks);
                g.setColor(new Color(0xdddddd));
                g.drawLine(LEFT + 1, y, LEFT + pw - 1, y);
                g.setColor(Color.BLACK);
                String label = Report.num(v);
                g.drawString(label, LEFT - 8 - g.getFontMetrics().stringWidth(label), y + 4);
            }
            int n = sizes.size();
            // x: one slot per size (sizes are roughly geometric, so equal spacing is a log scale)
            for (int i = 0; i < n; i++) {
                int x = LEFT + (int) Math.round(pw * (i + 0.5) / n);
                String label = Report.sizeLabel(scenario, sizes.get(i));
                g.drawString(label, x - g.getFontMetrics().stringWidth(label) / 2, TOP + ph + 18);
            }
            g.drawString(scenario.equals("progress") ? "computation between bursts" : "message size",
                LEFT + pw / 2 - 60, TOP + ph + 40);
            boolean bars = n == 1;
            int k = 0;
            for (String s : series) {
                Color c = COLORS[k % COLORS.length];
                g.setColor(c);
                g.setStroke(new BasicStroke(2f));
                int prevX = -1;
                int prevY = -1;
                for (int i = 0; i < n; i++) {
                    double v = Report.value(rs, scenario, s, sizes.get(i), metric);
                    if (Double.isNaN(v) || v <= 0) {
                        prevX = -1;
                        continue;
                    }
                    double f = logY ? Math.log(v / yLo) / Math.log(yHi / yLo) : (v - yLo) / (yHi - yLo);
                    int y = TOP + ph - (int) Math.round(ph * Math.max(0, Math.min(1, f)));
                    if (bars) {
                        int bw = Math.max(8, pw / (series.size() * 2));
                        int x = LEFT + pw / 2 - bw * series.size() / 2 + k * bw;
                        g.fillRect(x + 2, y, bw - 4, TOP + ph - y);
                    } else {
                        int x = LEFT + (int) Math.round(pw * (i + 0.5) / n);
                        g.fillOval(x - 4, y - 4, 8, 8);
                        if (prevX >= 0) {
                            g.drawLine(prevX, prevY, x, y);
                        }
                        prevX = x;
                        prevY = y;
                    }
                }
                g.fillRect(LEFT + pw + 15, TOP + 10 + k * 20, 12, 12);
                g.setColor(Color.BLACK);
                g.drawString(s, LEFT + pw + 32, TOP + 21 + k * 20);
                k++;
            }
        } finally {
            g.dispose();
        }
        String name = scenario.toLowerCase(Locale.ROOT) + ".png";
        ImageIO.write(img, "png", dir.resolve(name).toFile());
        return name;
    }
}
