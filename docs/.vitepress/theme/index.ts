import DefaultTheme from 'vitepress/theme'
import './contrast.css'

/** The default theme, with colours that meet WCAG AA contrast (checked by axe in the suite). */
export default DefaultTheme
