//! The live view of `gpufeed monitor` (ratatui): one panel per GPU with its utilisation
//! history, the verdict and period over the sliding window, idle gaps, memory, power,
//! clocks and throttle reasons; one line for the host. `q`, Esc or Ctrl-C stops and
//! prints the end report.
//!
//! [`draw`] only formats what it is given ([`ViewState`]), so it is tested with ratatui's
//! `TestBackend` at any size; [`Tui`] owns the terminal. Colour only marks the verdict and
//! is left out when `NO_COLOR` is set.

use std::cell::Cell;
use std::io;
use std::time::Duration;

use anyhow::{Context as _, Result};
use gpufeed_stats::UtilVerdict;
use gpufeed_telemetry::jsonl::{GpuInfo, GpuSample, HostSample};
use gpufeed_telemetry::sampler::Collector;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Sparkline};
use ratatui::{DefaultTerminal, Frame};

use gpufeed_analysis::trace::{GpuReport, UtilReport};
use gpufeed_stats::fmt::secs;

/// What one frame shows.
#[derive(Debug)]
pub struct ViewState<'a> {
    /// What is sampled: `nvml`, `synthetic oscillating`, a replayed file.
    pub title: &'a str,
    /// Seconds since the start.
    pub t: f64,
    /// The GPUs, as the source lists them.
    pub gpus: &'a [GpuInfo],
    /// The samples so far.
    pub collector: &'a Collector,
    /// The analysis of the sliding window, once it has enough samples.
    pub window: Option<&'a UtilReport>,
    /// The window's length, seconds.
    pub window_s: f64,
    /// Whether colour is allowed.
    pub color: bool,
}

fn verdict_style(v: UtilVerdict, color: bool) -> Style {
    let s = Style::default().add_modifier(Modifier::BOLD);
    if !color {
        return s;
    }
    s.fg(match v {
        UtilVerdict::Stable => Color::Green,
        UtilVerdict::Oscillating | UtilVerdict::Bursty | UtilVerdict::TooShort => Color::Yellow,
        UtilVerdict::Starved | UtilVerdict::Idle => Color::Red,
    })
}

fn opt(v: Option<f64>, decimals: usize, unit: &str) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}{unit}"))
}

/// Draws one frame into `frame`'s whole area.
pub fn draw(frame: &mut Frame, s: &ViewState) {
    let area = frame.area();
    let [head, body, host] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(2),
    ])
    .areas(area);
    let title = format!(
        " gpufeed monitor · {} · {:.1} s · verdict over the last {:.0} s · q to stop",
        s.title, s.t, s.window_s
    );
    frame.render_widget(
        Paragraph::new(title).style(Style::default().add_modifier(Modifier::REVERSED)),
        head,
    );
    let gpus: Vec<u32> = if s.gpus.is_empty() {
        s.collector.latest_gpu().map(|g| g.gpu).collect()
    } else {
        s.gpus.iter().map(|g| g.index).collect()
    };
    if gpus.is_empty() {
        frame.render_widget(Paragraph::new("no GPU samples yet"), body);
    } else {
        let rows = Layout::vertical(gpus.iter().map(|_| Constraint::Fill(1))).split(body);
        for (gpu, rect) in gpus.iter().zip(rows.iter()) {
            draw_gpu(frame, *rect, s, *gpu);
        }
    }
    frame.render_widget(Paragraph::new(host_lines(s.collector.host().last())), host);
}

fn draw_gpu(frame: &mut Frame, area: Rect, s: &ViewState, gpu: u32) {
    let info = s.gpus.iter().find(|g| g.index == gpu);
    let latest = s.collector.latest_gpu().find(|g| g.gpu == gpu);
    let report = s.window.and_then(|w| w.gpus.iter().find(|g| g.gpu == gpu));
    let mut title = vec![Span::raw(format!(
        " GPU {gpu}{} ",
        info.and_then(|i| i.name.as_deref())
            .map(|n| format!(" · {n}"))
            .unwrap_or_default()
    ))];
    match report {
        Some(r) => {
            title.push(Span::styled(
                r.verdict.as_str(),
                verdict_style(r.verdict, s.color),
            ));
            if let (UtilVerdict::Oscillating, Some(p)) = (r.verdict, r.period_s) {
                title.push(Span::raw(format!(" every {}", secs(p))));
            }
            title.push(Span::raw(" "));
        }
        None => title.push(Span::raw("warming up ")),
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Line::from(title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let text_rows = 2.min(inner.height);
    let [chart, text] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(text_rows)]).areas(inner);
    if let Some(series) = s.collector.series(gpu) {
        let width = usize::from(chart.width);
        let from = series.util.len().saturating_sub(width);
        let data: Vec<u64> = series.util[from..]
            .iter()
            .map(|u| u.round().clamp(0.0, 100.0) as u64)
            .collect();
        frame.render_widget(Sparkline::default().data(&data).max(100), chart);
    }
    frame.render_widget(Paragraph::new(gpu_lines(latest, info, report)), text);
}

fn gpu_lines<'a>(
    g: Option<&GpuSample>,
    info: Option<&GpuInfo>,
    r: Option<&GpuReport>,
) -> Vec<Line<'a>> {
    let Some(g) = g else {
        return vec![Line::from("no sample yet")];
    };
    let total = info
        .and_then(|i| i.memory_total_mib)
        .map(|t| format!("/{t}"))
        .unwrap_or_default();
    let throttle = match &g.throttle {
        Some(t) if t.is_empty() => "none".to_owned(),
        Some(t) => t.join(","),
        None => "-".to_owned(),
    };
    let first = format!(
        "util {}  mem {}{total} MiB  power {}  SM {} MHz  {} °C  throttle {throttle}",
        opt(g.util, 0, " %"),
        opt(g.mem_used_mib, 0, ""),
        opt(g.power_w, 0, " W"),
        g.sm_clock_mhz
            .map_or_else(|| "-".to_owned(), |c| c.to_string()),
        g.temp_c.map_or_else(|| "-".to_owned(), |c| c.to_string()),
    );
    let mut second = match r {
        Some(r) if r.idle_gaps.count > 0 => format!(
            "idle {:.0} % · {} gaps, mean {}, longest {} · p5 {:.0} p50 {:.0} p95 {:.0}",
            r.idle_fraction * 100.0,
            r.idle_gaps.count,
            secs(r.idle_gaps.mean_s),
            secs(r.idle_gaps.max_s),
            r.p5,
            r.p50,
            r.p95
        ),
        Some(r) => format!(
            "never idle · p5 {:.0} p50 {:.0} p95 {:.0}",
            r.p5, r.p50, r.p95
        ),
        None => String::new(),
    };
    if g.sm_active_pct.is_some() || g.tensor_active_pct.is_some() {
        second.push_str(&format!(
            " · SM active {} tensor {} DRAM {}",
            opt(g.sm_active_pct, 0, " %"),
            opt(g.tensor_active_pct, 0, " %"),
            opt(g.dram_active_pct, 0, " %")
        ));
    }
    vec![Line::from(first), Line::from(second)]
}

fn host_lines<'a>(h: Option<&HostSample>) -> Vec<Line<'a>> {
    let Some(h) = h else {
        return vec![Line::from(" host: not sampled")];
    };
    let m = &h.host;
    let busiest = m
        .cpu_cores_pct
        .as_ref()
        .and_then(|c| c.iter().copied().reduce(f64::max));
    let mut first = format!(
        " host  cpu {}  busiest core {}  iowait {}",
        opt(m.cpu_pct, 0, " %"),
        opt(busiest, 0, " %"),
        opt(m.iowait_pct, 1, " %"),
    );
    if let Some(p) = m.proc_cpu_pct {
        first.push_str(&format!("  command {:.2} cores", p / 100.0));
    }
    let second = format!(
        " pressure cpu {} io {} memory {}  disk read {}  load {}",
        opt(m.psi_cpu_some_pct, 1, " %"),
        opt(m.psi_io_some_pct, 1, " %"),
        opt(m.psi_mem_some_pct, 1, " %"),
        opt(m.disk_read_mib_s, 1, " MiB/s"),
        opt(m.load_1m, 2, ""),
    );
    vec![Line::from(first), Line::from(second)]
}

/// The terminal in raw mode on the alternate screen; restored on drop.
#[derive(Debug)]
pub struct Tui {
    terminal: DefaultTerminal,
    quit: Cell<bool>,
}

impl Tui {
    /// Takes over the terminal.
    pub fn start() -> Result<Self> {
        let terminal = ratatui::try_init().context("failed to set up the terminal")?;
        Ok(Tui {
            terminal,
            quit: Cell::new(false),
        })
    }

    /// Draws a frame.
    pub fn draw(&mut self, s: &ViewState) -> Result<()> {
        self.terminal
            .draw(|f| draw(f, s))
            .context("failed to draw")?;
        Ok(())
    }

    /// Whether `q`, Esc or Ctrl-C was pressed (reads pending key events, never waits).
    pub fn quit_requested(&self) -> bool {
        while event::poll(Duration::ZERO).unwrap_or(false) {
            if let Ok(Event::Key(k)) = event::read()
                && k.kind == KeyEventKind::Press
                && (matches!(k.code, KeyCode::Char('q') | KeyCode::Esc)
                    || (k.code == KeyCode::Char('c')
                        && k.modifiers.contains(KeyModifiers::CONTROL)))
            {
                self.quit.set(true);
            }
        }
        self.quit.get()
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        // Nothing useful to do if the terminal cannot be restored while dropping.
        let _: io::Result<()> = ratatui::try_restore();
    }
}

#[cfg(test)]
mod tests {
    use gpufeed_telemetry::jsonl::{HostMetrics, Record};
    use gpufeed_telemetry::sampler::{Sampler, TickOutcome};
    use gpufeed_telemetry::source::{Source, VirtualClock};
    use gpufeed_telemetry::synthetic::SyntheticSource;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use gpufeed_analysis::monitor::report::window_report;

    fn collect(pattern: &str, seconds: f64) -> (Vec<GpuInfo>, Collector) {
        let source = SyntheticSource::parse(pattern).unwrap();
        let gpus = source.gpus().to_vec();
        let mut sampler = Sampler::new(
            vec![Box::new(source)],
            Box::new(VirtualClock::default()),
            0.1,
        )
        .with_end(seconds);
        let mut c = Collector::new();
        let mut out = Vec::new();
        while let TickOutcome::Sampled(_) = sampler.tick(&mut out, &|| false).unwrap() {}
        c.extend(&out);
        c.push(&Record::Host(HostSample {
            t: seconds,
            host: HostMetrics {
                cpu_pct: Some(85.0),
                iowait_pct: Some(4.0),
                cpu_cores_pct: Some(vec![100.0, 70.0]),
                ..HostMetrics::default()
            },
        }));
        (gpus, c)
    }

    fn render(pattern: &str, seconds: f64, w: u16, h: u16) -> String {
        let (gpus, c) = collect(pattern, seconds);
        let window = window_report(&c, 30.0, 20, 10.0);
        let state = ViewState {
            title: "synthetic",
            t: seconds,
            gpus: &gpus,
            collector: &c,
            window: window.as_ref(),
            window_s: 30.0,
            color: true,
        };
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        term.draw(|f| draw(f, &state)).unwrap();
        let buf = term.backend().buffer().clone();
        let mut text = String::new();
        for y in 0..buf.area.height {
            for x in 0..buf.area.width {
                text.push_str(buf[(x, y)].symbol());
            }
            text.push('\n');
        }
        text
    }

    #[test]
    fn renders_at_80x24_and_200x60() {
        for (w, h) in [(80, 24), (200, 60)] {
            let text = render("oscillating", 30.0, w, h);
            assert!(
                text.contains("GPU 0 · synthetic (oscillating) oscillating every 1.50 s"),
                "{text}"
            );
            assert!(text.contains("util "), "{text}");
            assert!(
                text.contains("host  cpu 85 %  busiest core 100 %  iowait 4.0 %"),
                "{text}"
            );
        }
    }

    #[test]
    fn many_gpus_tiny_terminals_and_no_data_do_not_panic() {
        for (w, h) in [(80, 24), (200, 60), (20, 5), (1, 1), (0, 0)] {
            let _ = render("bursty:gpus=8", 40.0, w.max(1), h.max(1));
            let _ = render("idle", 0.0, w.max(1), h.max(1));
        }
        let text = render("stable", 0.0, 80, 24);
        assert!(text.contains("warming up"), "{text}");
    }

    #[test]
    fn no_color_still_reads() {
        assert_eq!(
            verdict_style(UtilVerdict::Idle, false),
            Style::default().add_modifier(Modifier::BOLD)
        );
    }
}
