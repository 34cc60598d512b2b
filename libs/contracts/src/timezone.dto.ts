// Timezone settings contracts (issue 3): request/reply DTOs and the settings.timezone.changed event.
export {};
