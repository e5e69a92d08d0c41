! The demo's picture, an SVG file written with plain Fortran I/O (no plotting library): four heat maps of one
! unseen test field -- the solver's answer, the surrogate's, their difference, and persistence's error (the
! start field minus the solver's answer: what "nothing changes" gets wrong) -- and the training loss over both
! runs, with the restart marked.
!
! The two error maps share one colour scale, so the eye compares their magnitudes directly. A heat map is one
! <path> per colour level (squares "M x y h6v6h-6z", 6 px a cell), which keeps the file near 100 kB. Every
! panel is a <g id="..."> so a test can find it: solver, surrogate, difference, persistence, loss.
module diffusion2d_picture
  use, intrinsic :: iso_fortran_env, only: real32
  implicit none
  private
  public :: write_picture

  integer, parameter :: cell = 6, levels = 32, margin = 20, top = 60
  ! Sequential map for fields (dark blue -> teal -> yellow) and diverging map for errors (blue-white-red).
  character(len=7), parameter :: sequential(5) = ['#440154', '#3b528b', '#21918c', '#5ec962', '#fde725']
  character(len=7), parameter :: diverging(3) = ['#2166ac', '#f7f7f7', '#b2182b']

contains

  ! solver, surrogate, start: one test field after the lead time (solver, surrogate) and at its start (what
  ! persistence predicts). loss_csv: "time_step,loss" lines and "# resumed at time step N" markers.
  subroutine write_picture(path, solver, surrogate, start, loss_csv, verdict)
    character(len=*), intent(in) :: path, loss_csv, verdict
    real(real32), intent(in) :: solver(:, :), surrogate(:, :), start(:, :)
    integer :: unit, side, width
    real(real32) :: lo, hi, err
    side = cell * size(solver, 1)
    width = 4 * side + 5 * margin
    open (newunit=unit, file=path, status='replace', action='write')
    write (unit, '(a, i0, a, i0, a)') '<svg xmlns="http://www.w3.org/2000/svg" width="', width, '" height="', &
        top + side + 300, '" font-family="sans-serif" font-size="13">'
    write (unit, '(a)') '<rect width="100%" height="100%" fill="white"/>'
    write (unit, '(3a)') '<text x="20" y="24" font-size="16" font-weight="bold">', escaped(verdict), '</text>'
    lo = min(minval(solver), minval(surrogate))
    hi = max(maxval(solver), maxval(surrogate))
    err = max(maxval(abs(surrogate - solver)), maxval(abs(start - solver)), tiny(1.0_real32))
    call heat_map(unit, 'solver', 'solver u(t+lead)', solver, lo, hi, .false., margin, top)
    call heat_map(unit, 'surrogate', 'surrogate prediction', surrogate, lo, hi, .false., 2 * margin + side, top)
    call heat_map(unit, 'difference', 'surrogate - solver', surrogate - solver, -err, err, .true., &
                  3 * margin + 2 * side, top)
    call heat_map(unit, 'persistence', 'persistence - solver', start - solver, -err, err, .true., &
                  4 * margin + 3 * side, top)
    call loss_panel(unit, loss_csv, margin, top + side + 50, width - 2 * margin, 200)
    write (unit, '(a)') '</svg>'
    close (unit)
  end subroutine write_picture

  ! One heat map at (x0, y0): title above, value range below, one path per colour level.
  subroutine heat_map(unit, id, title, field, lo, hi, two_sided, x0, y0)
    integer, intent(in) :: unit, x0, y0
    character(len=*), intent(in) :: id, title
    real(real32), intent(in) :: field(:, :), lo, hi
    logical, intent(in) :: two_sided
    integer :: level, i, j, n
    integer :: q(size(field, 1), size(field, 2))
    n = size(field, 1)
    q = quantized(field, lo, hi)
    write (unit, '(3a)') '<g id="', id, '">'
    write (unit, '(a, i0, a, i0, 3a)') '<text x="', x0, '" y="', y0 - 8, '">', escaped(title), '</text>'
    do level = 0, levels - 1
      if (.not. any(q == level)) cycle
      write (unit, '(3a)', advance='no') '<path fill="', level_colour(level, two_sided), '" d="'
      do j = 1, size(field, 2)
        do i = 1, n
          ! Rows of the picture run along j (north up), columns along i.
          if (q(i, j) /= level) cycle
          write (unit, '(a, i0, a, i0, 3(a, i0), a)', advance='no') 'M', x0 + cell * (i - 1), ' ', &
              y0 + cell * (size(field, 2) - j), 'h', cell, 'v', cell, 'h', -cell, 'z'
        end do
      end do
      write (unit, '(a)') '"/>'
    end do
    write (unit, '(a, i0, a, i0, a, es9.2, a, es9.2, a)') '<text x="', x0, '" y="', y0 + cell * size(field, 2) + 16, &
        '" font-size="11">range ', lo, ' .. ', hi, '</text>'
    write (unit, '(a)') '</g>'
  end subroutine heat_map

  ! Colour level 0 .. levels-1 of each value in [lo, hi].
  pure function quantized(field, lo, hi) result(level)
    real(real32), intent(in) :: field(:, :), lo, hi
    integer :: level(size(field, 1), size(field, 2))
    level = min(levels - 1, max(0, int(levels * (field - lo) / max(hi - lo, tiny(hi)))))
  end function quantized

  function level_colour(level, two_sided) result(hex)
    integer, intent(in) :: level
    logical, intent(in) :: two_sided
    character(len=7) :: hex
    real(real32) :: t
    t = (level + 0.5) / levels
    if (two_sided) then
      hex = interpolate(diverging, t)
    else
      hex = interpolate(sequential, t)
    end if
  end function level_colour

  ! The colour at t in [0, 1] along evenly spaced anchor colours.
  function interpolate(anchors, t) result(hex)
    character(len=7), intent(in) :: anchors(:)
    real(real32), intent(in) :: t
    character(len=7) :: hex
    real(real32) :: position, w
    integer :: k, channel, a, b
    position = t * (size(anchors) - 1)
    k = min(int(position) + 1, size(anchors) - 1)
    w = position - (k - 1)
    hex = '#'
    do channel = 0, 2
      read (anchors(k)(2 + 2 * channel:3 + 2 * channel), '(z2)') a
      read (anchors(k + 1)(2 + 2 * channel:3 + 2 * channel), '(z2)') b
      write (hex(2 + 2 * channel:3 + 2 * channel), '(z2.2)') nint((1 - w) * a + w * b)
    end do
  end function interpolate

  ! The loss per time step on a log scale, and a dashed line where the second run resumed.
  subroutine loss_panel(unit, csv, x0, y0, width, height)
    integer, intent(in) :: unit, x0, y0, width, height
    character(len=*), intent(in) :: csv
    real(real32), allocatable :: steps(:), losses(:)
    integer :: resumed
    real(real32) :: lo, hi, last_step
    call read_losses(csv, steps, losses, resumed)
    write (unit, '(a)') '<g id="loss">'
    write (unit, '(a, i0, a, i0, a)') '<text x="', x0, '" y="', y0 - 8, &
        '">training loss (MSE, log scale), both runs: each time step (light) and its running mean (dark)</text>'
    write (unit, '(a, i0, a, i0, a, i0, a, i0, a)') '<rect x="', x0, '" y="', y0, '" width="', width, &
        '" height="', height, '" fill="none" stroke="#888"/>'
    if (size(losses) >= 2) then
      lo = log10(max(minval(losses), tiny(lo)))
      hi = max(log10(max(maxval(losses), tiny(hi))), lo + 1.0e-3)
      last_step = max(maxval(steps), 1.0)
      ! Each step's loss (light) and its running mean over 2% of the run (dark): the trend through the noise of
      ! single batches.
      call polyline(unit, '#f4a582', 1.0, x0 + width * steps / last_step, &
                    y0 + height * (hi - log10(max(losses, tiny(lo)))) / (hi - lo))
      call polyline(unit, '#b2182b', 2.0, x0 + width * steps / last_step, &
                    y0 + height * (hi - log10(max(running_mean(losses, max(1, size(losses) / 50)), tiny(lo)))) &
                    / (hi - lo))
      write (unit, '(a, i0, a, i0, a, es9.2, a)') '<text x="', x0 + 4, '" y="', y0 + 14, '" font-size="11">', &
          10.0**hi, '</text>'
      write (unit, '(a, i0, a, i0, a, es9.2, a)') '<text x="', x0 + 4, '" y="', y0 + height - 4, &
          '" font-size="11">', 10.0**lo, '</text>'
      write (unit, '(a, i0, a, i0, a, i0, a)') '<text x="', x0 + width, '" y="', y0 + height + 14, &
          '" font-size="11" text-anchor="end">time step ', nint(last_step), '</text>'
      if (resumed > 0) call resume_marker(unit, x0 + nint(width * resumed / last_step), y0, height, resumed)
    end if
    write (unit, '(a)') '</g>'
  end subroutine loss_panel

  subroutine polyline(unit, colour, stroke_width, x, y)
    integer, intent(in) :: unit
    character(len=*), intent(in) :: colour
    real(real32), intent(in) :: stroke_width, x(:), y(:)
    integer :: k
    write (unit, '(3a, f0.1, a)', advance='no') '<polyline fill="none" stroke="', colour, '" stroke-width="', &
        stroke_width, '" points="'
    do k = 1, size(x)
      write (unit, '(f0.1, a, f0.1, a)', advance='no') x(k), ',', y(k), ' '
    end do
    write (unit, '(a)') '"/>'
  end subroutine polyline

  ! The mean of values(k - half .. k + half), clipped at the ends.
  pure function running_mean(values, half) result(mean)
    real(real32), intent(in) :: values(:)
    integer, intent(in) :: half
    real(real32) :: mean(size(values))
    integer :: k, first, last
    do k = 1, size(values)
      first = max(1, k - half)
      last = min(size(values), k + half)
      mean(k) = sum(values(first:last)) / (last - first + 1)
    end do
  end function running_mean

  subroutine resume_marker(unit, x, y0, height, step)
    integer, intent(in) :: unit, x, y0, height, step
    write (unit, '(a, i0, a, i0, a, i0, a, i0, a)') '<line x1="', x, '" y1="', y0, '" x2="', x, '" y2="', &
        y0 + height, '" stroke="#2166ac" stroke-dasharray="4 3"/>'
    write (unit, '(a, i0, a, i0, a, i0, a)') '<text x="', x + 4, '" y="', y0 + height - 18, &
        '" font-size="11" fill="#2166ac">restart from checkpoint (time step ', step, ')</text>'
  end subroutine resume_marker

  ! Reads "time_step,loss" lines; "# resumed at time step N" gives the restart (0 if none).
  subroutine read_losses(csv, steps, losses, resumed)
    character(len=*), intent(in) :: csv
    real(real32), allocatable, intent(out) :: steps(:), losses(:)
    integer, intent(out) :: resumed
    character(len=128) :: line
    integer :: unit, status, step
    real(real32) :: loss
    allocate (steps(0), losses(0))
    resumed = 0
    open (newunit=unit, file=csv, status='old', action='read', iostat=status)
    if (status /= 0) return
    do
      read (unit, '(a)', iostat=status) line
      if (status /= 0) exit
      if (line(1:1) == '#') then
        if (index(line, 'resumed at time step') > 0) read (line(index(line, 'step') + 4:), *) resumed
        cycle
      end if
      read (line, *, iostat=status) step, loss
      if (status /= 0) cycle
      steps = [steps, real(step, real32)]
      losses = [losses, loss]
    end do
    close (unit)
  end subroutine read_losses

  ! The few characters XML does not allow in text.
  function escaped(text) result(out)
    character(len=*), intent(in) :: text
    character(len=:), allocatable :: out
    integer :: k
    out = ''
    do k = 1, len(text)
      select case (text(k:k))
      case ('<'); out = out // '&lt;'
      case ('>'); out = out // '&gt;'
      case ('&'); out = out // '&amp;'
      case default; out = out // text(k:k)
      end select
    end do
  end function escaped

end module diffusion2d_picture
