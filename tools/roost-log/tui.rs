//! `roost-log tui`: an interactive view of the log. On top, a timeline of
//! every slot's state over the whole log (one letter per column: Owner,
//! Unclaimed, Matched, Claimed, Preempting, Backfill, Drained; the colour is
//! the activity) with the selected event's time marked; below, the events
//! and, beside them, the selected event in full, why it happened, and the
//! state of its slot right after it (replayed with the daemon's own
//! `apply`).
//!
//! Keys: ↑/↓ or j/k move, PgUp/PgDn, g/G (or Home/End) first and last,
//! n/p next and previous transition, Tab shows only the selected event's
//! actor (again: everyone), `:` then a sequence number and Enter jumps,
//! q or Esc quits.

use std::collections::BTreeMap;
use std::io;

use ratatui::crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::prelude::*;
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use roost::events::{Envelope, Event};
use roost::policy::slot::{Activity, SlotEvent, State};
use roost::startd::Replay;

use super::filter::show_time;
use super::summary;

/// Events between two kept replays: the state at any event is a kept
/// replay plus at most this many events applied.
const CHECKPOINT_EVERY: usize = 2000;

/// What the viewer shows and where it is.
pub struct App {
    events: Vec<Envelope>,
    /// Indices into `events` shown in the list.
    visible: Vec<usize>,
    /// Position in `visible`.
    selected: usize,
    /// Only this actor's events, when set.
    only: Option<String>,
    /// `(events applied, replay after them)`.
    checkpoints: Vec<(usize, Replay)>,
    /// Each slot's `(time, state, activity)` changes, in order.
    timeline: BTreeMap<String, Vec<(i64, State, Activity)>>,
    /// The sequence number being typed after `:`.
    jump: Option<String>,
    /// A line for the status bar.
    message: String,
}

impl App {
    /// A viewer over `events` (in log order), at the last one.
    #[cfg(test)]
    pub fn new(events: Vec<Envelope>) -> App {
        App::after(Replay::default(), events)
    }

    /// A viewer over `events`, which follow the state `base` (the replay of
    /// the events before them that are not shown).
    pub fn after(base: Replay, events: Vec<Envelope>) -> App {
        let mut timeline: BTreeMap<String, Vec<(i64, State, Activity)>> = base
            .slots
            .iter()
            .filter(|(_, s)| !s.deleted)
            .map(|(id, s)| (id.clone(), vec![(i64::MIN, s.state, s.activity)]))
            .collect();
        let mut checkpoints = vec![(0, base.clone())];
        let mut replay = base;
        for (i, env) in events.iter().enumerate() {
            replay.apply(env);
            match &env.event {
                Event::Slot(SlotEvent::ActivityChanged {
                    at,
                    state,
                    activity,
                    ..
                }) => timeline
                    .entry(env.actor.clone())
                    .or_default()
                    .push((*at, *state, *activity)),
                Event::Slot(SlotEvent::Snapshot { at, slot }) => {
                    let slot = slot.slot();
                    timeline.entry(env.actor.clone()).or_default().push((
                        *at,
                        slot.state,
                        slot.activity,
                    ));
                }
                _ => {}
            }
            if (i + 1) % CHECKPOINT_EVERY == 0 {
                checkpoints.push((i + 1, replay.clone()));
            }
        }
        let visible: Vec<usize> = (0..events.len()).collect();
        let selected = visible.len().saturating_sub(1);
        App {
            events,
            visible,
            selected,
            only: None,
            checkpoints,
            timeline,
            jump: None,
            message: String::new(),
        }
    }

    fn current(&self) -> Option<&Envelope> {
        self.visible.get(self.selected).map(|&i| &self.events[i])
    }

    /// The replayed state right after event `idx`.
    fn state_after(&self, idx: usize) -> Replay {
        let upto = idx + 1;
        let (done, base) = self
            .checkpoints
            .iter()
            .rev()
            .find(|(n, _)| *n <= upto)
            .map_or((0, Replay::default()), |(n, r)| (*n, r.clone()));
        let mut r = base;
        for env in &self.events[done..upto.min(self.events.len())] {
            r.apply(env);
        }
        r
    }

    fn refilter(&mut self) {
        let keep = self.current().map(|e| e.seq);
        self.visible = (0..self.events.len())
            .filter(|&i| {
                self.only
                    .as_ref()
                    .is_none_or(|a| self.events[i].actor == *a)
            })
            .collect();
        self.selected = keep
            .and_then(|seq| self.visible.iter().position(|&i| self.events[i].seq >= seq))
            .unwrap_or(self.visible.len().saturating_sub(1));
    }

    /// Moves to the next (`forward`) or previous transition in view.
    fn transition(&mut self, forward: bool) {
        let is_change = |i: usize| {
            matches!(
                self.events[i].event,
                Event::Slot(SlotEvent::ActivityChanged { .. })
            )
        };
        let found = if forward {
            (self.selected + 1..self.visible.len()).find(|&p| is_change(self.visible[p]))
        } else {
            (0..self.selected)
                .rev()
                .find(|&p| is_change(self.visible[p]))
        };
        match found {
            Some(p) => self.selected = p,
            None => self.message = "no further transition".into(),
        }
    }

    /// Handles a key; false when the viewer should close.
    pub fn key(&mut self, code: KeyCode) -> bool {
        self.message.clear();
        if let Some(buf) = &mut self.jump {
            match code {
                KeyCode::Char(c) if c.is_ascii_digit() => buf.push(c),
                KeyCode::Backspace => {
                    buf.pop();
                }
                KeyCode::Enter => {
                    let want: u64 = buf.parse().unwrap_or(0);
                    self.jump = None;
                    match self
                        .visible
                        .iter()
                        .position(|&i| self.events[i].seq >= want)
                    {
                        Some(p) => self.selected = p,
                        None => self.message = format!("no record {want} in view"),
                    }
                }
                _ => self.jump = None,
            }
            return true;
        }
        let last = self.visible.len().saturating_sub(1);
        match code {
            KeyCode::Char('q') | KeyCode::Esc => return false,
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(last),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(20),
            KeyCode::PageDown => self.selected = (self.selected + 20).min(last),
            KeyCode::Home | KeyCode::Char('g') => self.selected = 0,
            KeyCode::End | KeyCode::Char('G') => self.selected = last,
            KeyCode::Char('n') => self.transition(true),
            KeyCode::Char('p') => self.transition(false),
            KeyCode::Char(':') => self.jump = Some(String::new()),
            KeyCode::Tab => {
                self.only = match (&self.only, self.current()) {
                    (None, Some(e)) => Some(e.actor.clone()),
                    _ => None,
                };
                self.refilter();
            }
            _ => {}
        }
        true
    }
}

fn state_letter(s: State) -> char {
    match s {
        State::Owner => 'O',
        State::Unclaimed => 'U',
        State::Matched => 'M',
        State::Claimed => 'C',
        State::Preempting => 'P',
        State::Backfill => 'B',
        State::Drained => 'D',
    }
}

fn activity_style(a: Activity) -> Style {
    let colour = match a {
        Activity::Idle => Color::Gray,
        Activity::Busy => Color::Green,
        Activity::Suspended => Color::Yellow,
        Activity::Retiring => Color::Cyan,
        Activity::Vacating | Activity::Killing => Color::Red,
        Activity::Benchmarking => Color::Magenta,
    };
    Style::default().fg(colour)
}

fn timeline_lines(app: &App, width: u16) -> Vec<Line<'static>> {
    let (Some(first), Some(last)) = (app.events.first(), app.events.last()) else {
        return Vec::new();
    };
    let (t0, t1) = (first.time, last.time.max(first.time));
    let name_width = 10usize;
    let cols = usize::from(width).saturating_sub(name_width + 2).max(1);
    let col_time = |c: usize| {
        let span = i128::from(t1 - t0);
        let c = i128::try_from(c).unwrap_or(0);
        let n = i128::try_from(cols.saturating_sub(1).max(1)).unwrap_or(1);
        t0 + i64::try_from(span * c / n).unwrap_or(0)
    };
    let cursor = app.current().map(|e| e.time).map(|t| {
        if t1 == t0 {
            0
        } else {
            let pos =
                i128::from(t - t0) * i128::try_from(cols - 1).unwrap_or(0) / i128::from(t1 - t0);
            usize::try_from(pos).unwrap_or(0)
        }
    });
    let mut lines = Vec::new();
    for (slot, changes) in &app.timeline {
        let mut spans = vec![Span::raw(format!("{slot:<name_width$}  "))];
        for c in 0..cols {
            let t = col_time(c);
            let at = changes.partition_point(|(ct, ..)| *ct <= t);
            let (ch, mut style) = match at.checked_sub(1).map(|i| changes[i]) {
                Some((_, s, a)) => (state_letter(s), activity_style(a)),
                None => (' ', Style::default()),
            };
            if Some(c) == cursor {
                style = style.add_modifier(Modifier::REVERSED);
            }
            spans.push(Span::styled(ch.to_string(), style));
        }
        lines.push(Line::from(spans));
    }
    lines.push(Line::from(format!(
        "{:<name_width$}  {} … {}",
        "",
        show_time(t0),
        show_time(t1)
    )));
    lines
}

fn event_lines(app: &App, height: u16) -> Vec<Line<'static>> {
    let rows = usize::from(height.saturating_sub(2)).max(1);
    let start = app
        .selected
        .saturating_sub(rows / 2)
        .min(app.visible.len().saturating_sub(rows));
    app.visible
        .iter()
        .enumerate()
        .skip(start)
        .take(rows)
        .map(|(pos, &i)| {
            let e = &app.events[i];
            let text = format!(
                "{:>8} {} {:<10} {}",
                e.seq,
                show_time(e.time),
                e.actor,
                summary(&e.event)
            );
            let style = if pos == app.selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            Line::styled(text, style)
        })
        .collect()
}

fn detail_lines(app: &App) -> Vec<Line<'static>> {
    let Some(&idx) = app.visible.get(app.selected) else {
        return vec![Line::from("no events")];
    };
    let e = &app.events[idx];
    let mut out = vec![
        Line::styled(
            format!("record {}  {}  {}", e.seq, show_time(e.time), e.actor),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Line::from(summary(&e.event)),
    ];
    if let Event::Slot(SlotEvent::ActivityChanged {
        transition, why, ..
    }) = &e.event
    {
        out.push(Line::styled(
            format!("why: {why} (transition {transition})"),
            Style::default().fg(Color::Yellow),
        ));
    }
    let state = app.state_after(idx);
    let slot_id = if state.slots.contains_key(&e.actor) {
        Some(e.actor.clone())
    } else {
        state
            .starters
            .get(&e.actor)
            .map(|s| s.slot.clone())
            .or_else(|| state.hooks.get(&e.actor).map(|h| h.slot.clone()))
    };
    out.push(Line::from(""));
    match slot_id
        .as_ref()
        .and_then(|id| state.slots.get(id).map(|s| (id, s)))
    {
        Some((id, s)) => {
            out.push(Line::styled(
                format!("{id} after this event:"),
                Style::default().add_modifier(Modifier::BOLD),
            ));
            out.push(Line::from(format!(
                "  {}/{} since {}",
                s.state,
                s.activity,
                show_time(s.entered_activity)
            )));
            match &s.claim {
                Some(c) => {
                    out.push(Line::from(format!(
                        "  claim {}: job {}{}",
                        c.id,
                        roost::startd::audit::job_label(&c.job),
                        c.ending
                            .map(|x| format!(", ending ({x:?})"))
                            .unwrap_or_default()
                    )));
                }
                None => out.push(Line::from("  no claim")),
            }
            if let Some(w) = &s.preempting {
                out.push(Line::from(format!("  waiting: claim {}", w.id)));
            }
            if s.starter {
                out.push(Line::from("  starter running"));
            }
        }
        None => out.push(Line::from(format!(
            "{} slot(s), {} starter(s) and {} hook(s) running after this event",
            state.slots.values().filter(|s| !s.deleted).count(),
            state.starters.len(),
            state.hooks.len()
        ))),
    }
    out.push(Line::from(""));
    let json = serde_json::to_string_pretty(&e.event).unwrap_or_default();
    out.extend(json.lines().map(|l| Line::from(l.to_string())));
    out
}

/// Draws the whole viewer.
pub fn render(f: &mut Frame, app: &App) {
    let slots = u16::try_from(app.timeline.len()).unwrap_or(u16::MAX);
    let rows = Layout::vertical([
        Constraint::Length(slots.saturating_add(3).min(14)),
        Constraint::Min(5),
        Constraint::Length(1),
    ])
    .split(f.area());
    let timeline = Paragraph::new(timeline_lines(app, rows[0].width)).block(
        Block::default()
            .borders(Borders::ALL)
            .title(" slots over time "),
    );
    f.render_widget(timeline, rows[0]);
    let cols =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).split(rows[1]);
    let title = match &app.only {
        Some(a) => format!(" events of {a} "),
        None => " events ".to_string(),
    };
    let list = Paragraph::new(event_lines(app, cols[0].height))
        .block(Block::default().borders(Borders::ALL).title(title));
    f.render_widget(list, cols[0]);
    let details = Paragraph::new(detail_lines(app))
        .wrap(Wrap { trim: false })
        .block(Block::default().borders(Borders::ALL).title(" selected "));
    f.render_widget(details, cols[1]);
    let bar = match (&app.jump, app.message.is_empty()) {
        (Some(buf), _) => format!(":{buf}"),
        (None, false) => app.message.clone(),
        (None, true) => format!(
            "{}/{}  ↑↓ jk PgUp PgDn g G move · n p transitions · Tab this actor only · :seq jump · q quit",
            app.selected + 1,
            app.visible.len()
        ),
    };
    f.render_widget(Paragraph::new(bar), rows[2]);
}

/// Runs the viewer on `events` (which follow the state `base`) until the
/// user quits.
pub fn run(base: Replay, events: Vec<Envelope>) -> io::Result<()> {
    let mut app = App::after(base, events);
    // Release builds abort on a panic, which runs no destructor and skips
    // the restore below: the hook gives the terminal back first.
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = disable_raw_mode();
        let _ = execute!(io::stdout(), LeaveAlternateScreen);
        default(info);
    }));
    enable_raw_mode()?;
    let mut stdout = io::stdout();
    execute!(stdout, EnterAlternateScreen)?;
    let mut terminal = Terminal::new(CrosstermBackend::new(stdout))?;
    let result = (|| -> io::Result<()> {
        loop {
            terminal.draw(|f| render(f, &app))?;
            if let TermEvent::Key(k) = event::read()?
                && k.kind == KeyEventKind::Press
                && !app.key(k.code)
            {
                return Ok(());
            }
        }
    })();
    // The terminal is given back whatever happened.
    let _ = disable_raw_mode();
    let _ = execute!(terminal.backend_mut(), LeaveAlternateScreen);
    let _ = terminal.show_cursor();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use roost::events::SCHEMA;

    /// The events of the rank-preemption example, as its log holds them.
    fn example() -> Vec<Envelope> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/policies/rank-preemption.toml"
        );
        let sc =
            roost::policy::sim::Scenario::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut out = Vec::new();
        roost::policy::sim::simulate_with(
            &sc,
            |_| {},
            |actor, events| {
                for (time, actor, event) in roost::events::recorded_batch(actor, events) {
                    out.push(Envelope {
                        seq: out.len() as u64 + 1,
                        time,
                        actor,
                        schema: SCHEMA,
                        event,
                    });
                }
                Ok::<(), std::convert::Infallible>(())
            },
        )
        .unwrap();
        out
    }

    fn screen(app: &App) -> String {
        let mut t = Terminal::new(TestBackend::new(150, 40)).unwrap();
        t.draw(|f| render(f, app)).unwrap();
        let buf = t.backend().buffer().clone();
        let mut s = String::new();
        for y in 0..buf.area.height {
            for x in 0..buf.area.width {
                s.push_str(buf[(x, y)].symbol());
            }
            s.push('\n');
        }
        s
    }

    #[test]
    fn jumping_to_a_record_shows_it_why_and_the_slot_after_it() {
        let mut app = App::new(example());
        for k in [':', '2', '1'] {
            assert!(app.key(KeyCode::Char(k)));
        }
        assert!(screen(&app).contains(":21"));
        assert!(app.key(KeyCode::Enter));
        let s = screen(&app);
        assert!(s.contains("record 21"), "{s}");
        assert!(
            s.contains("why: better claim waiting (transition 13)"),
            "{s}"
        );
        assert!(s.contains("slot1 after this event:"), "{s}");
        assert!(s.contains("Claimed/Retiring since"), "{s}");
        assert!(
            s.contains("claim 1: job - bob, ending (BetterClaim)"),
            "{s}"
        );
        assert!(s.contains("waiting: claim 2"), "{s}");
        // The timeline has slot1's row, claimed for most of the run.
        let row = s
            .lines()
            .find(|l| l.contains("slot1  "))
            .unwrap_or_default()
            .to_string();
        assert!(row.matches('C').count() > 50, "{row}");
    }

    #[test]
    fn keys_move_between_transitions_and_filter_by_actor() {
        let mut app = App::new(example());
        assert!(app.key(KeyCode::Char('g')));
        assert_eq!(app.current().map(|e| e.seq), Some(1));
        assert!(app.key(KeyCode::Char('n')));
        let e = app.current().unwrap();
        assert!(matches!(
            e.event,
            Event::Slot(SlotEvent::ActivityChanged { .. })
        ));
        let first_change = e.seq;
        assert!(app.key(KeyCode::Char('n')));
        assert!(app.current().unwrap().seq > first_change);
        assert!(app.key(KeyCode::Char('p')));
        assert_eq!(app.current().unwrap().seq, first_change);
        assert!(app.key(KeyCode::Tab));
        assert!(screen(&app).contains(" events of slot1 "));
        assert!(app.key(KeyCode::Tab));
        assert!(screen(&app).contains(" events "));
        assert!(!app.key(KeyCode::Char('q')));
    }
}
